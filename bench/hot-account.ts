// `npm run bench -- --hot-account`: one account (a big customer) billed by two gateway processes
// on one PostgreSQL at once, plain chat calls as fast as they are answered. Reports the billed
// calls per second of both together, and checks after the run that every hold ended and the
// account's balance is exact: the credit less the sum of its usage rows, and equal to its ledger.
// See docs/benchmarks.md, "One hot account".
import { randomBytes } from 'node:crypto';
import { symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { checkAccountBalance } from '../src/billing/accounts.js';
import { sandboxCatalogue } from '../src/config/sandbox-catalogue.js';
import { describeMachine, type RunEnvironment, runEnvironment, writeJson, writeMarkdownSection } from './docs.js';
import { openPostgresStore, postgresBaseUrl, postgresUnreachable } from './ledger-stores.js';
import { runUndiciLoad } from './load.js';
import type { LoadRun } from './load-run.js';
import type { BenchOptions } from './options.js';
import { type BenchChild, freePort, ROOT, startNode } from './processes.js';
import type { BenchRequest } from './scenarios.js';
import { median } from './stats.js';
import { count, fixed, textTable } from './table.js';
import { adminCall, buildDist, gatewayNodeArgs } from './targets.js';
import { makeWorkDir, removeWorkDir } from './work-dir.js';
import { findWrk, runWrk, wrkVersion } from './wrk.js';

const TARGET_CALLS_PER_SECOND = 2_000;
const GATEWAYS = 2;
const CONNECTIONS_PER_GATEWAY = 50;
// Ample for every call of the run, so that none is refused for money; below 2^53.
const CREDIT_MICROS = 1_000_000_000_000_000;
const SETTLE_WAIT_MS = 30_000;

export interface HotAccountResult {
  environment: RunEnvironment;
  load: string;
  gateways: number;
  connectionsPerGateway: number;
  rounds: { callsPerSecond: number; perGateway: number[]; errors: number; p50Ms: number[]; p99Ms: number[] }[];
  /** Median over rounds of both gateways' calls per second added up. */
  callsPerSecond: number;
  usageRows: number;
  chargedMicros: number;
  balance: { credit: number; balance: number; held: number; ledgerBalance: number; ledgerHeld: number; consistent: boolean; exact: boolean };
  openHolds: number;
}

export async function runHotAccountBench(options: BenchOptions, interrupted: Promise<never>): Promise<number> {
  const out = (line: string) => process.stdout.write(`${line}\n`);
  const baseUrl = postgresBaseUrl();
  const unreachable = await postgresUnreachable(baseUrl);
  if (unreachable) throw new Error(`the hot-account bench needs PostgreSQL: ${unreachable}`);
  buildDist();
  const environment = runEnvironment();
  const wrk = findWrk();
  const load = wrk ? `${wrkVersion(wrk)} (1 thread per gateway)` : 'undici load loop in the bench process (wrk not found)';
  out(`tollroute hot-account bench: ${GATEWAYS} gateways on one PostgreSQL, one account, ${CONNECTIONS_PER_GATEWAY} connections each; load: ${load}`);

  const workDir = makeWorkDir('hot-account');
  // A schema of its own, migrated here first so that the two gateways never race to create it.
  const pgStore = await openPostgresStore(baseUrl);
  const children: BenchChild[] = [];
  try {
    const { urls, adminToken } = await startGateways(workDir, pgStore.url, children);
    const broken = Promise.race([...children.map((child) => child.died), interrupted]);
    broken.catch(() => {});
    const account = await adminCall<{ id: string }>(urls[0]!, adminToken, '/admin/accounts', { name: 'hot', credit_micros: CREDIT_MICROS });
    const { key } = await adminCall<{ key: string }>(urls[0]!, adminToken, `/admin/accounts/${account.id}/keys`, { name: 'hot' });
    const call: BenchRequest = {
      method: 'POST',
      path: '/v1/chat/completions',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ model: 'sandbox-chat', messages: [{ role: 'user', content: 'hello, how are you today?' }], max_tokens: 64 }),
      endMarker: '"finish_reason"',
    };
    const both = (seconds: number) =>
      Promise.all(
        urls.map((url) => {
          const spec = { url, connections: CONNECTIONS_PER_GATEWAY, seconds, broken };
          return wrk ? runWrk(call, { ...spec, wrk, threads: 1, workDir }) : runUndiciLoad(call, spec);
        }),
      );

    await both(options.warmupSeconds);
    const rounds: HotAccountResult['rounds'] = [];
    for (let round = 1; round <= options.rounds; round++) {
      const runs: LoadRun[] = await both(options.seconds);
      const figures = {
        callsPerSecond: runs.reduce((sum, run) => sum + run.requestsPerSecond, 0),
        perGateway: runs.map((run) => run.requestsPerSecond),
        errors: runs.reduce((sum, run) => sum + run.errors, 0),
        p50Ms: runs.map((run) => run.latencyMs.p50),
        p99Ms: runs.map((run) => run.latencyMs.p99),
      };
      rounds.push(figures);
      out(`  round ${round}: ${count(figures.callsPerSecond)} calls/s (${figures.perGateway.map(count).join(' + ')}), ${figures.errors} errors`);
    }

    const settled = await Promise.race([accountOnceSettled(pgStore, account.id), broken]);
    const result: HotAccountResult = {
      environment,
      load,
      gateways: GATEWAYS,
      connectionsPerGateway: CONNECTIONS_PER_GATEWAY,
      rounds,
      callsPerSecond: median(rounds.map((r) => r.callsPerSecond)),
      ...settled,
    };
    report(result, options.writeDocs, out);
    const failed = rounds.some((r) => r.errors > 0);
    return result.balance.consistent && result.balance.exact && result.openHolds === 0 && !failed ? 0 : 1;
  } finally {
    await Promise.allSettled(children.reverse().map((child) => child.stop()));
    await pgStore.dispose();
    removeWorkDir(workDir);
  }
}

/** The sandbox and two gateways on `storeUrl`, each its own process, as `dist/` ships. */
async function startGateways(workDir: string, storeUrl: string, children: BenchChild[]) {
  const sandboxPort = await freePort();
  const ports = [];
  for (let i = 0; i < GATEWAYS; i++) ports.push(await freePort());
  const adminToken = `adm-bench-${randomBytes(16).toString('hex')}`;
  // Started through a link of its own name, as the other benches do (a stray pkill spares it).
  const entry = path.join(workDir, 'bench-tollroute.js');
  symlinkSync(path.join(ROOT, 'dist', 'main.js'), entry);
  const configFor = (port: number, name: string) => {
    const file = path.join(workDir, `${name}.json`);
    writeFileSync(
      file,
      JSON.stringify({
        ...sandboxCatalogue(`http://127.0.0.1:${sandboxPort}`),
        host: '127.0.0.1',
        port,
        admin_token: adminToken,
        log_level: 'info',
        data_dir: workDir,
        store: storeUrl,
        sandbox: { port: sandboxPort },
        limits: { default_rpm: 1_000_000_000 },
      }),
    );
    return file;
  };
  children.push(await startNode('sandbox', [entry, 'sandbox', '--config', configFor(sandboxPort, 'sandbox')]));
  const nodeArgs = gatewayNodeArgs();
  for (const [i, port] of ports.entries()) {
    const name = `gateway-${i + 1}`;
    children.push(await startNode(name, [...nodeArgs, entry, 'serve', '--config', configFor(port, name)], { stdoutFile: path.join(workDir, `${name}.log`) }));
  }
  return { urls: ports.map((port) => `http://127.0.0.1:${port}`), adminToken };
}

/** Waits until no hold of the account is open, then reads its balance, ledger and usage. */
async function accountOnceSettled(pgStore: Awaited<ReturnType<typeof openPostgresStore>>, accountId: string) {
  const db = pgStore.store.db;
  const openHolds = async () =>
    Number(
      (
        await db
          .selectFrom('holds')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('account_id', '=', accountId)
          .where('state', '=', 'open')
          .executeTakeFirstOrThrow()
      ).n,
    );
  const deadline = Date.now() + SETTLE_WAIT_MS;
  let open = await openHolds();
  while (open > 0 && Date.now() < deadline) {
    await delay(250);
    open = await openHolds();
  }
  const usage = await db
    .selectFrom('usage')
    .select((eb) => [eb.fn.countAll().as('rows'), eb.fn.sum<number>('amount_micros').as('charged')])
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  const chargedMicros = Number(usage.charged ?? 0);
  const check = await checkAccountBalance(pgStore.store, accountId);
  return {
    usageRows: Number(usage.rows),
    chargedMicros,
    openHolds: open,
    balance: {
      credit: CREDIT_MICROS,
      balance: check.balanceMicros,
      held: check.heldMicros,
      ledgerBalance: check.ledgerBalanceMicros,
      ledgerHeld: check.ledgerHeldMicros,
      consistent: check.consistent,
      exact: check.heldMicros === 0 && check.balanceMicros === CREDIT_MICROS - chargedMicros,
    },
  };
}

function report(result: HotAccountResult, writeDocs: boolean, out: (line: string) => void) {
  const e = result.environment;
  const header = ['round', 'calls/s (both)', ...Array.from({ length: result.gateways }, (_, i) => `gateway ${i + 1} calls/s`), 'p50 ms', 'p99 ms', 'errors'];
  const rows = result.rounds.map((r, i) => [
    String(i + 1),
    count(r.callsPerSecond),
    ...r.perGateway.map(count),
    r.p50Ms.map((v) => fixed(v)).join(' / '),
    r.p99Ms.map((v) => fixed(v)).join(' / '),
    count(r.errors),
  ]);
  const met = result.callsPerSecond >= TARGET_CALLS_PER_SECOND;
  const b = result.balance;
  const lines = [
    `- billed calls/s over ${result.gateways} gateways ≥ ${count(TARGET_CALLS_PER_SECOND)}: ${met ? 'MET' : 'NOT MET'} (median ${count(result.callsPerSecond)})`,
    `- every hold ended: ${result.openHolds === 0 ? 'yes' : `NO, ${result.openHolds} still open`}; ${count(result.usageRows)} calls billed, ${count(result.chargedMicros)} micros in all`,
    `- balance exact (credit − charged, nothing held): ${b.exact ? 'yes' : 'NO'} (${count(b.balance)} = ${count(b.credit)} − ${count(result.chargedMicros)}, held ${count(b.held)})`,
    `- balance and held equal to the ledger's sums: ${b.consistent ? 'yes' : `NO (ledger ${count(b.ledgerBalance)} / ${count(b.ledgerHeld)})`}`,
  ];
  out('');
  out(textTable(header, rows));
  for (const line of lines) out(line);
  const intro = `Run of ${describeMachine(e)}; ${result.gateways} gateway processes on one PostgreSQL, ${result.connectionsPerGateway} connections each, ${result.rounds.length} rounds of both at once; load: ${result.load}.`;
  const file = writeJson('hot-account', result);
  // The page keeps the rounds in one line; the table stays in the terminal and the JSON.
  const rounds = `- calls/s of both, round by round: ${result.rounds.map((r) => count(r.callsPerSecond)).join(', ')}; errors ${count(result.rounds.reduce((sum, r) => sum + r.errors, 0))}`;
  if (writeDocs) writeMarkdownSection('hot-account', [intro, '', rounds, ...lines].join('\n'));
  out(`results: ${file}`);
}
