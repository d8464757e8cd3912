// The bench's flags and knobs. Flags choose what runs; environment variables shorten a run while
// developing (the defaults are what the published figures use).

export interface BenchOptions {
  /** --sweep (or BENCH_SWEEP=1): the scenarios of "How cost grows" instead of the default set. */
  sweep: boolean;
  /** --ledger: the store micro-bench instead of the HTTP one. */
  ledger: boolean;
  /** --slow-streams: many slow streams held at once, the gateway's memory, every one settled. */
  slowStreams: boolean;
  /** --hot-account: one account billed by two gateway processes on one PostgreSQL. */
  hotAccount: boolean;
  /** --compare <git ref>: the working tree's gateway against the one built from that commit, side by side. */
  compare: string | undefined;
  /** --paired (with --compare): both builds loaded at once in every round, instead of in turn. */
  paired: boolean;
  /** --write-docs: the mode's results section of docs/benchmarks.md replaced in place. */
  writeDocs: boolean;
  /** --help: the usage, nothing run. */
  help: boolean;
  /** --only a,b: run only the scenarios so named (for development; never with --write-docs). */
  only: string[];
  rounds: number;
  seconds: number;
  warmupSeconds: number;
  /** Before the first scenario, each target loaded with every scenario's call for this long (0: not). */
  processWarmupSeconds: number;
  ttfbSeconds: number;
  wrkThreads: number;
  ledgerSeconds: number;
  ledgerWorkers: number;
  ledgerAccounts: number;
  /** BENCH_SLOW_STREAMS: how many; by default 10 000, or as many as the open-files limit allows. */
  slowStreamCount: number | undefined;
  slowStreamWords: number;
}

function envNumber(name: string, fallback: number, { min = 0, integer = false } = {}): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min || (integer && !Number.isInteger(value))) {
    throw new Error(`${name}=${raw}: expected ${integer ? 'an integer' : 'a number'} of at least ${min}`);
  }
  return value;
}

export const USAGE = `usage: npm run bench -- [mode] [--write-docs] [--only name,name] [--help]

modes (one at a time; see docs/benchmarks.md):
  (none)            the default scenarios: direct, floor and gateway, round by round (about 16 minutes)
  --sweep           how cost grows with connections, stream length and request size (about 18 minutes)
  --ledger          hold+settle pairs/s straight on the store, SQLite and PostgreSQL (about 1 minute)
  --slow-streams    10 000 streams of one chunk a second at once: memory, every one settled (about 5 minutes)
  --hot-account     one account billed by two gateways on one PostgreSQL: calls/s, the balance exact
  --compare REF     the working tree's gateway against the one built from commit REF, rounds alternated
                    (plain chat at 1 and 50 connections, or the --only scenarios; needs wrk)

options:
  --paired          with --compare: both builds loaded at once in every round, on a machine whose
                    speed swings between minutes
  --write-docs      replace this mode's results section of docs/benchmarks.md in place
  --only a,b        run only these scenarios (while developing; not with --write-docs)
  --help, -h        this text

environment (the defaults are what the published figures use):
  BENCH_ROUNDS (3), BENCH_SECONDS (8), BENCH_WARMUP_SECONDS (2), BENCH_PROCESS_WARMUP_SECONDS (2),
  BENCH_TTFB_SECONDS (2), BENCH_WRK_THREADS (1), BENCH_WRK (path of wrk, or "none" for the undici fallback),
  BENCH_SKIP_BUILD=1, BENCH_KEEP_WORKDIR=1, BENCH_SWEEP=1, BENCH_GATEWAY_NODE_ARGS (e.g. "--cpu-prof"),
  BENCH_AFTER_NODE_ARGS (--compare: node flags for the working tree's gateway only),
  BENCH_LEDGER_SECONDS (5), BENCH_LEDGER_WORKERS (64), BENCH_LEDGER_ACCOUNTS (1000),
  BENCH_SLOW_STREAMS (10000, or what the open-files limit allows), BENCH_SLOW_STREAM_WORDS (150),
  TOLLROUTE_TEST_POSTGRES_URL (postgres://postgres@127.0.0.1:5432/test)`;

export function parseOptions(argv: string[]): BenchOptions {
  const flags = new Set<string>();
  let only: string[] = [];
  let compare: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--compare') compare = argv[++i] || undefined;
    else if (arg.startsWith('--compare=')) compare = arg.slice('--compare='.length) || undefined;
    else if (arg === '--only') only = (argv[++i] ?? '').split(',').filter(Boolean);
    else if (arg.startsWith('--only=')) only = arg.slice('--only='.length).split(',').filter(Boolean);
    else if (['--sweep', '--ledger', '--slow-streams', '--hot-account', '--paired', '--write-docs', '--help', '-h'].includes(arg)) flags.add(arg);
    else throw new Error(`unknown argument ${arg}\n${USAGE}`);
  }
  const options: BenchOptions = {
    sweep: flags.has('--sweep') || process.env.BENCH_SWEEP === '1',
    ledger: flags.has('--ledger'),
    slowStreams: flags.has('--slow-streams'),
    hotAccount: flags.has('--hot-account'),
    compare,
    paired: flags.has('--paired'),
    writeDocs: flags.has('--write-docs'),
    help: flags.has('--help') || flags.has('-h'),
    only,
    rounds: envNumber('BENCH_ROUNDS', 3, { min: 1, integer: true }),
    seconds: envNumber('BENCH_SECONDS', 8, { min: 1, integer: true }),
    warmupSeconds: envNumber('BENCH_WARMUP_SECONDS', 2, { min: 1, integer: true }),
    processWarmupSeconds: envNumber('BENCH_PROCESS_WARMUP_SECONDS', 2, { min: 0, integer: true }),
    ttfbSeconds: envNumber('BENCH_TTFB_SECONDS', 2, { min: 0.1 }),
    wrkThreads: envNumber('BENCH_WRK_THREADS', 1, { min: 1, integer: true }),
    ledgerSeconds: envNumber('BENCH_LEDGER_SECONDS', 5, { min: 0.5 }),
    ledgerWorkers: envNumber('BENCH_LEDGER_WORKERS', 64, { min: 1, integer: true }),
    ledgerAccounts: envNumber('BENCH_LEDGER_ACCOUNTS', 1000, { min: 1, integer: true }),
    slowStreamCount: process.env.BENCH_SLOW_STREAMS ? envNumber('BENCH_SLOW_STREAMS', 0, { min: 1, integer: true }) : undefined,
    slowStreamWords: envNumber('BENCH_SLOW_STREAM_WORDS', 150, { min: 1, integer: true }),
  };
  if (options.writeDocs && only.length > 0) throw new Error('--only runs a part of the bench: it cannot --write-docs');
  if (argv.some((arg) => arg === '--compare' || arg.startsWith('--compare=')) && !compare) throw new Error(`--compare needs a git ref\n${USAGE}`);
  if (options.paired && !compare) throw new Error('--paired loads two builds at once: it needs --compare');
  if (compare && options.writeDocs) throw new Error('--compare writes nothing to the docs: it cannot --write-docs');
  return options;
}
