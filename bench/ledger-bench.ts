// `npm run bench -- --ledger`: the ledger micro-bench on SQLite, then on PostgreSQL when it is
// reachable, its report and targets, and (with --write-docs) its section of docs/benchmarks.md.
import { describeMachine, type RunEnvironment, runEnvironment, writeJson, writeMarkdownSection } from './docs.js';
import { benchLedger, type LedgerSettings, type LedgerStoreResult } from './ledger.js';
import { type BenchStore, openPostgresStore, openSqliteStore, postgresBaseUrl, postgresUnreachable } from './ledger-stores.js';
import type { BenchOptions } from './options.js';
import { count, fixed, markdownTable, textTable } from './table.js';

const TARGET_PAIRS_PER_SECOND = { sqlite: 20_000, postgres: 5_000 } as const;
const MAX_ERROR_RATE = 0.01;

interface LedgerResults {
  environment: RunEnvironment;
  settings: LedgerSettings;
  stores: LedgerStoreResult[];
  skipped: { store: 'postgres'; reason: string }[];
}

export async function runLedgerBench(options: BenchOptions, interrupted: Promise<never>): Promise<number> {
  const settings: LedgerSettings = { rounds: options.rounds, seconds: options.ledgerSeconds, workers: options.ledgerWorkers, accounts: options.ledgerAccounts };
  const environment = runEnvironment();
  const out = (line: string) => process.stdout.write(`${line}\n`);
  out(`tollroute ledger bench: ${describe(environment, settings)}`);

  const stores: LedgerStoreResult[] = [];
  const skipped: LedgerResults['skipped'] = [];
  const run = async (open: () => Promise<BenchStore>) => {
    const opened = await open();
    try {
      stores.push(await benchLedger(opened.name, opened.store, settings, interrupted, out));
    } finally {
      await opened.dispose();
    }
  };
  await run(openSqliteStore);
  const postgresUrl = postgresBaseUrl();
  const unreachable = await postgresUnreachable(postgresUrl);
  if (unreachable) {
    skipped.push({ store: 'postgres', reason: unreachable });
    out(`  postgres skipped: ${unreachable}`);
  } else {
    await run(() => openPostgresStore(postgresUrl));
  }

  out(`\n${ledgerTable(stores, 'text')}`);
  for (const s of skipped) out(`${s.store}: skipped, ${s.reason}`);
  const data: LedgerResults = { environment, settings, stores, skipped };
  out(`\nresults written to ${writeJson('ledger', data)}`);
  if (options.writeDocs) {
    const notes = skipped.map((s) => `- ${s.store}: not run, ${s.reason}.`);
    const markdown = [`Run of ${describe(environment, settings)}.`, '', ledgerTable(stores, 'markdown'), ...(notes.length ? ['', ...notes] : [])].join('\n');
    out(`ledger written to ${writeMarkdownSection('ledger', markdown)}`);
  }
  return failures(stores);
}

function describe(env: RunEnvironment, s: LedgerSettings): string {
  return (
    `${describeMachine(env)}; ` +
    `${s.accounts} accounts, ${s.workers} workers, ` +
    `${s.rounds} round${s.rounds === 1 ? '' : 's'} of ${s.seconds} s after a 1 s warm-up, medians over rounds`
  );
}

function ledgerTable(stores: LedgerStoreResult[], format: 'text' | 'markdown'): string {
  const header = ['store', 'accounts used', 'pairs/s', 'pair p50 ms', 'pair p99 ms', 'client CPU ms/pair', 'errors', 'target', 'result', 'balances consistent'];
  const rows = stores.flatMap((s) =>
    s.variants.map((v) => {
      const target = TARGET_PAIRS_PER_SECOND[s.store];
      return [
        s.store,
        v.variant === 'hot' ? 'one (hot)' : `${count(s.accounts)} at random`,
        count(v.pairsPerSecond),
        fixed(v.pairP50Ms),
        fixed(v.pairP99Ms),
        fixed(v.clientCpuMsPerPair, 3),
        String(v.errors),
        `≥ ${count(target)} pairs/s`,
        v.pairsPerSecond >= target ? 'MET' : 'NOT MET',
        `${count(s.consistentAccounts)} of ${count(s.accounts)}`,
      ];
    }),
  );
  return format === 'text' ? textTable(header, rows, 2) : markdownTable(header, rows, 2);
}

/** 1 when a balance disagrees with its ledger or too many pairs failed; targets never fail the run. */
function failures(stores: LedgerStoreResult[]): number {
  const problems = stores.flatMap((s) => [
    ...(s.consistentAccounts === s.accounts ? [] : [`${s.store}: ${s.accounts - s.consistentAccounts} accounts disagree with their ledger`]),
    ...s.variants
      .filter((v) => v.errors > MAX_ERROR_RATE * (v.errors + v.runs.reduce((sum, r) => sum + r.pairs, 0)))
      .map((v) => `${s.store} ${v.variant}: ${v.errors} pairs failed, first: ${v.firstError}`),
  ]);
  if (problems.length === 0) return 0;
  process.stderr.write(`ledger bench:\n  ${problems.join('\n  ')}\n`);
  return 1;
}
