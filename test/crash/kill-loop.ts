// The kill loop: a gateway process under a seeded mix of traffic is killed with SIGKILL
// at seeded random moments and started again on the same store and data directory, N times; then
// the traffic stops, a last process finishes what the dead ones left (the sweep ends their holds,
// the task engine their tasks, the deliverer their webhooks), and the store is checked.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { startSandbox } from '../../src/sandbox/server.js';
import { openStore, type Store } from '../../src/store/open.js';
import { ADMIN_TOKEN } from '../helpers/gateway.js';
import { freePort } from '../helpers/processes.js';
import { startReceiver } from '../helpers/receiver.js';
import { gatewayProcess, writeKillLoopConfig } from './gateway-process.js';
import { type CallFigures, checkCalls, checkStore, openWork, type StoreFigures } from './invariants.js';
import { forkRandom } from './prng.js';
import { type CallRecord, startTraffic } from './traffic.js';

export interface KillLoopOptions {
  /** `sqlite:` (a file in a fresh directory is made when the path is empty) or a postgres:// URL. */
  store: string;
  seed: number;
  kills: number;
  workers?: number;
  /** A kill lands this long after the process answered its first call, at random within the range. */
  killDelayMs?: [number, number];
  /** Share of kills that land while the process is still starting (migrations, journal replay, first sweep). */
  startupKillShare?: number;
  /** How long the last process may take to finish what the dead ones left. */
  settleTimeoutMs?: number;
  log?: (line: string) => void;
}

export interface KillLoopReport {
  store: 'sqlite' | 'postgres';
  seed: number;
  kills: number;
  startupKills: number;
  calls: number;
  callsByKind: Record<string, Record<CallRecord['outcome'], number>>;
  /** Why calls were cut, most frequent first (a kill: "other side closed", "socket hang up"…). */
  cutReasons: [string, number][];
  stored: StoreFigures;
  callFigures: CallFigures;
  violations: string[];
  seconds: number;
  /** From the last start until nothing was open: the sweep, the task engine and the deliverer at work. */
  finishSeconds: number;
  dataDir: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function admin(base: string, method: 'GET' | 'POST', p: string, body?: unknown): Promise<any> {
  const res = await request(`${base}${p}`, {
    method,
    body: body === undefined ? undefined : JSON.stringify(body),
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
  });
  const text = await res.body.text();
  if (res.statusCode >= 300) throw new Error(`${method} ${p}: ${res.statusCode} ${text}`);
  return JSON.parse(text);
}

async function within<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`waited ${ms} ms for ${what}`)), ms)));
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

async function untilNothingOpen(store: Store, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = await openWork(store);
    if (open.holds + open.tasks + open.webhooks === 0) return;
    if (Date.now() > deadline) throw new Error(`still open after ${timeoutMs} ms: ${JSON.stringify(open)}`);
    await sleep(100);
  }
}

export async function runKillLoop(options: KillLoopOptions): Promise<KillLoopReport> {
  const { seed, kills, workers = 8, killDelayMs = [100, 2_000], startupKillShare = 0.1, settleTimeoutMs = 60_000, log = () => {} } = options;
  const began = Date.now();
  const dialect = options.store.startsWith('sqlite:') ? 'sqlite' : 'postgres';
  const dir = mkdtempSync(path.join(tmpdir(), `tollroute-kill-loop-${dialect}-`));
  const storeUrl = options.store === 'sqlite:' ? `sqlite:${path.join(dir, 'tollroute.db')}` : options.store;
  const killer = forkRandom(seed, 0);
  log(`kill loop on ${dialect}: seed ${seed}, ${kills} kills, ${workers} workers; data and gateway.log in ${dir}`);

  // In this process, so it outlives every gateway it serves; streams made slow so kills land mid-stream.
  const sandbox = await startSandbox({ port: 0, taskMs: 600 });
  const receiver = await startReceiver();
  const cleanups: (() => Promise<unknown>)[] = [() => sandbox.close(), () => receiver.close()];
  let store: Store | undefined;
  try {
    for (const [kind, ms] of [
      ['chat', 30],
      ['messages', 30],
      ['speech', 60],
    ] as const) {
      await request(`${sandbox.url}/__sandbox/faults`, { method: 'POST', body: JSON.stringify({ kind, chunk_delay_ms: ms }) }).then((r) => r.body.dump());
    }
    const port = await freePort();
    const configFile = writeKillLoopConfig({ dir, sandboxUrl: sandbox.url, store: storeUrl, port });
    const gateway = gatewayProcess({ configFile, dir, port });
    cleanups.push(() => gateway.stop());
    await gateway.start();

    const account = await admin(gateway.base, 'POST', '/admin/accounts', { name: 'kill-loop', credit_micros: 1_000_000_000_000 });
    const { key } = await admin(gateway.base, 'POST', `/admin/accounts/${account.id}/keys`, {});
    receiver.secret = (await admin(gateway.base, 'GET', `/admin/accounts/${account.id}/webhook-secret`)).secret;

    const randoms = Array.from({ length: workers }, (_, i) => forkRandom(seed, i + 1));
    const traffic = startTraffic({ gateway, apiKey: key, callbackUrl: receiver.url, tag: `kl${seed.toString(36)}` }, randoms);
    let startupKills = 0;
    let running = true;
    let stopped: Promise<void> | undefined;
    for (let kill = 1; kill <= kills; kill++) {
      if (kill > 1 && kill < kills && killer.chance(startupKillShare)) {
        startupKills += 1;
        await gateway.startAndKill(killer.int(0, 1_500));
      } else {
        if (!running) await gateway.start();
        // Timed from the first answer, not from listening: on a loaded machine a process takes a
        // while to serve, and a kill before that would find no call in the store to cut.
        const answered = traffic.answers();
        for (const deadline = Date.now() + 10_000; traffic.answers() === answered && Date.now() < deadline; ) await sleep(10);
        await sleep(killer.int(killDelayMs[0], killDelayMs[1]));
        if (kill === kills) stopped = traffic.stop(); // the last kill cuts the calls in hand; no new ones start
        await gateway.kill();
      }
      running = false;
      if (kill % 25 === 0) log(`  ${kill} kills, ${traffic.calls.length} calls so far`);
    }
    await gateway.start();
    const lastStart = Date.now();
    const unfinished: string[] = [];
    await within(stopped!, 30_000, 'the workers to finish their last calls').catch((error: Error) => unfinished.push(error.message));
    store = await openStore(storeUrl);
    // The checks below name whatever is still open.
    await untilNothingOpen(store, settleTimeoutMs).catch((error: Error) => unfinished.push(error.message));
    const finishSeconds = Math.round((Date.now() - lastStart) / 100) / 10;
    await gateway.stop();

    const checkedStore = await checkStore(store, receiver.deliveries);
    const checkedCalls = await checkCalls(store, traffic.calls);
    const callsByKind: KillLoopReport['callsByKind'] = {};
    for (const call of traffic.calls) {
      const counts = (callsByKind[call.kind] ??= { complete: 0, refused: 0, cut: 0 });
      counts[call.outcome] += 1;
    }
    const reasons = new Map<string, number>();
    for (const call of traffic.calls.filter((c) => c.outcome !== 'complete')) {
      const reason = call.error ?? `status ${call.status}`;
      reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
    }
    const violations = [...gateway.unexpectedExits, ...unfinished, ...checkedStore.violations, ...checkedCalls.violations];
    // A clean run leaves nothing behind; a failed one keeps its store and gateway.log for the post-mortem.
    if (violations.length === 0) cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    return {
      store: dialect,
      seed,
      kills,
      startupKills,
      calls: traffic.calls.length,
      callsByKind,
      cutReasons: [...reasons].sort((a, b) => b[1] - a[1]),
      stored: checkedStore.figures,
      callFigures: checkedCalls.figures,
      violations,
      seconds: Math.round((Date.now() - began) / 100) / 10,
      finishSeconds,
      dataDir: dir,
    };
  } finally {
    await store?.close();
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  }
}

/** The figures of a run, as the long run and the CI test print them. */
export function describeReport(report: KillLoopReport): string {
  const s = report.stored;
  const late = report.callFigures.endedByRecoveryAfterCompleting;
  return [
    `${report.store}: seed ${report.seed}, ${report.kills} kills (${report.startupKills} during start-up), ${report.calls} calls in ${report.seconds} s`,
    `  calls: ${Object.entries(report.callsByKind)
      .map(([kind, c]) => `${kind} ${c.complete}/${c.refused}/${c.cut}`)
      .join(', ')} (complete/refused/cut)`,
    `  not complete: ${report.cutReasons.map(([reason, n]) => `${n}× ${reason}`).join('; ')}`,
    `  holds checked: ${s.holds} (${s.settled} settled, ${s.released} released; by recovery: ${s.recoveredSettled} billed their progress, ${s.recoveredReleased} released)`,
    `  whole answers billed as documented: ${report.callFigures.billedAsDocumented}; Idempotency-Keys: ${report.callFigures.idempotencyKeys}`,
    `  whole streams whose settle the kill cut off (ended by recovery): ${late.count}, documented ${late.documentedMicros} micros, charged ${late.chargedMicros}${late.count ? ` (${late.requestIds.slice(0, 5).join(', ')})` : ''}`,
    `  tasks: ${JSON.stringify(s.tasks)}; webhooks: ${JSON.stringify(s.webhooks)}, ${s.duplicateDeliveries} delivered twice`,
    `  after the last start, everything ended in ${report.finishSeconds} s (a webhook a killed process had claimed waits out its lease: webhooks.timeout_ms + 30 s)`,
    `  violations: ${report.violations.length}${report.violations.length > 0 ? `; store and gateway.log kept in ${report.dataDir}` : ''}`,
    ...report.violations.slice(0, 30).map((v) => `    ${v}`),
  ].join('\n');
}
