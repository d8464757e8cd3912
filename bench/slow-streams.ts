// `npm run bench -- --slow-streams`: many streamed chat calls held open at once, each sending one
// chunk a second, through the built gateway. Measures the gateway's memory while it holds them
// all, checks every stream reached its end marker, and checks in the store that every hold was
// settled and every balance still equals its ledger. See docs/benchmarks.md, "Slow streams".
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { Pool, request } from 'undici';
import { Database } from '../src/store/sqlite-driver.js';
import { describeMachine, type RunEnvironment, runEnvironment, writeJson, writeMarkdownSection } from './docs.js';
import type { BenchOptions } from './options.js';
import { peakRssBytes, resetPeakRss, rssBytes } from './proc-stats.js';
import { count, fixed, markdownTable, textTable } from './table.js';
import { buildDist, startTargets } from './targets.js';
import { makeWorkDir, removeWorkDir } from './work-dir.js';

const TARGET_STREAMS = 10_000;
const TARGET_RSS_BYTES = 1024 ** 3;
const CHUNK_DELAY_MS = 1_000;
// At most this many streams wait for their answer's headers at once: a new one is opened as an
// earlier one is answered, at the pace the gateway takes them, so its listen backlog never
// overflows (an overflow drops connections, which would be the bench's fault, not the gateway's).
const OPENING_AT_ONCE = 200;
const SAMPLE_EVERY_MS = 250;
const SETTLE_WAIT_MS = 60_000;
// Sockets the gateway holds besides its two per stream (store, logs, listeners, the metrics port).
const FD_HEADROOM = 200;

export interface SlowStreamsResult {
  environment: RunEnvironment;
  requested: number;
  /** Why fewer than the target's 10 000, when so. */
  limitedBy: string | null;
  wordsPerStream: number;
  completed: number;
  failed: number;
  firstFailure: string | null;
  mostOpenAtOnce: number;
  gatewayRssAtMostOpenMb: number | null;
  gatewayPeakRssMb: number | null;
  gatewayRssAfterMb: number | null;
  rssPerStreamKb: number | null;
  holds: { settled: number; released: number; open: number };
  usageRows: number;
  balancesConsistent: boolean;
  seconds: number;
}

/** The most streams this machine lets the gateway hold: it needs two sockets per stream (caller and upstream). */
export function streamsThatFit(): { streams: number; limitedBy: string | null } {
  const soft = openFilesLimit();
  if (soft === null) return { streams: TARGET_STREAMS, limitedBy: null };
  const fit = Math.floor((soft - FD_HEADROOM) / 2);
  if (fit >= TARGET_STREAMS) return { streams: TARGET_STREAMS, limitedBy: null };
  return { streams: fit, limitedBy: `the open-files limit of ${soft} (two sockets per stream in the gateway, ${FD_HEADROOM} kept for the rest)` };
}

function openFiles(pid: number): number | null {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return null;
  }
}

function openFilesLimit(): number | null {
  try {
    const line = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    return line ? Number(line[1]) : null;
  } catch {
    return null;
  }
}

export async function runSlowStreamsBench(options: BenchOptions, interrupted: Promise<never>): Promise<number> {
  const out = (line: string) => process.stdout.write(`${line}\n`);
  const fit = streamsThatFit();
  const requested = options.slowStreamCount ?? fit.streams;
  const limitedBy = options.slowStreamCount === undefined ? fit.limitedBy : null;
  const words = options.slowStreamWords;
  buildDist();
  const environment = runEnvironment();
  out(
    `tollroute slow-streams bench: ${requested} streams of ${words} words, one chunk every ${CHUNK_DELAY_MS} ms${limitedBy ? ` (limited by ${limitedBy})` : ''}`,
  );

  const workDir = makeWorkDir('slow-streams');
  const targets = await startTargets(workDir, interrupted, { channelConnections: requested + 100 });
  try {
    await request(`${targets.urls.direct}/__sandbox/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sandbox-chat', chunk_delay_ms: CHUNK_DELAY_MS }),
    }).then((res) => res.body.dump());
    const gatewayPid = targets.processes.gateway.pid;
    resetPeakRss(gatewayPid);
    const startedAt = performance.now();
    const run = await Promise.race([holdStreams(targets.urls.gateway, targets.gatewayKey, requested, words, gatewayPid, out), targets.broken]);
    const rssAfter = rssBytes(gatewayPid);
    const store = await Promise.race([storeOnceSettled(path.join(workDir, 'tollroute.db')), targets.broken]);
    const result: SlowStreamsResult = {
      environment,
      requested,
      limitedBy,
      wordsPerStream: words,
      ...run,
      gatewayPeakRssMb: mb(peakRssBytes(gatewayPid)),
      gatewayRssAfterMb: mb(rssAfter),
      ...store,
      seconds: (performance.now() - startedAt) / 1000,
    };
    report(result, options.writeDocs, out);
    return result.balancesConsistent ? 0 : 1;
  } finally {
    await targets.stop();
    removeWorkDir(workDir);
  }
}

/** Opens `total` streams at the gateway's pace, reads each to its end, and samples the gateway's RSS meanwhile. */
async function holdStreams(gatewayUrl: string, key: string, total: number, words: number, gatewayPid: number, out: (line: string) => void) {
  const pool = new Pool(gatewayUrl, { connections: total, headersTimeout: 0, bodyTimeout: 0 });
  const body = JSON.stringify({ model: 'sandbox-chat', stream: true, messages: [{ role: 'user', content: `tell me a story [[words:${words}]]` }] });
  let open = 0;
  let mostOpen = 0;
  let rssAtMostOpen: number | null = null;
  // The gateway before the first stream: what the streams add is measured from here.
  const baselineRss = rssBytes(gatewayPid);
  let completed = 0;
  let failed = 0;
  let firstFailure: string | null = null;

  const startedAt = performance.now();
  const sampler = setInterval(() => {
    const rss = rssBytes(gatewayPid);
    if (open > mostOpen || (open === mostOpen && rss !== null && (rssAtMostOpen === null || rss > rssAtMostOpen))) {
      mostOpen = open;
      rssAtMostOpen = rss;
    }
  }, SAMPLE_EVERY_MS);
  const progress = setInterval(
    () =>
      out(`  open ${open}, completed ${completed}, failed ${failed}, gateway RSS ${mb(rssBytes(gatewayPid))} MB, ${openFiles(gatewayPid) ?? 'n/a'} open files`),
    2_000,
  );

  /** One stream read to its end; `answered` is called once its headers came (or it failed before). */
  async function oneStream(answered: () => void): Promise<void> {
    let held = false;
    try {
      const res = await pool.request({
        method: 'POST',
        path: '/v1/chat/completions',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body,
      });
      answered();
      if (res.statusCode !== 200) throw new Error(`status ${res.statusCode}: ${(await res.body.text()).slice(0, 200)}`);
      open += 1;
      held = true;
      let tail = '';
      for await (const chunk of res.body) tail = (tail + (chunk as Buffer).toString()).slice(-64);
      if (!tail.includes('data: [DONE]')) throw new Error('the stream ended without data: [DONE]');
      completed += 1;
    } catch (error) {
      answered();
      failed += 1;
      firstFailure ??= `${error instanceof Error ? error.message : String(error)} (${((performance.now() - startedAt) / 1000).toFixed(1)} s in, ${open} open)`;
    } finally {
      if (held) open -= 1;
    }
  }

  try {
    const streams: Promise<void>[] = [];
    let opening = 0;
    let slotFreed: (() => void) | undefined;
    for (let i = 0; i < total; i++) {
      while (opening >= OPENING_AT_ONCE) await new Promise<void>((resolve) => (slotFreed = resolve));
      opening += 1;
      let once = false;
      streams.push(
        oneStream(() => {
          if (once) return;
          once = true;
          opening -= 1;
          slotFreed?.();
        }),
      );
    }
    await Promise.all(streams);
  } finally {
    clearInterval(sampler);
    clearInterval(progress);
    await pool.close();
  }
  const grown = rssAtMostOpen !== null && baselineRss !== null ? rssAtMostOpen - baselineRss : null;
  return {
    completed,
    failed,
    firstFailure,
    mostOpenAtOnce: mostOpen,
    gatewayRssAtMostOpenMb: mb(rssAtMostOpen),
    rssPerStreamKb: grown !== null && mostOpen > 0 ? Math.round(grown / mostOpen / 1024) : null,
  };
}

/** Waits until no hold is open (a stream is settled just after its end), then reads what the store holds. */
async function storeOnceSettled(file: string) {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const openHolds = db.prepare<[], { n: number }>("select count(*) as n from holds where state = 'open'");
    const deadline = Date.now() + SETTLE_WAIT_MS;
    while (openHolds.get()!.n > 0 && Date.now() < deadline) await delay(500);
    const states = db.prepare<[], { state: string; n: number }>('select state, count(*) as n from holds group by state').all();
    const byState = (state: string) => states.find((row) => row.state === state)?.n ?? 0;
    const disagreeing = db
      .prepare<[], { n: number }>(
        `select count(*) as n from accounts a
         where a.balance_micros != (select coalesce(sum(balance_delta_micros), 0) from ledger l where l.account_id = a.id)
            or a.held_micros != (select coalesce(sum(held_delta_micros), 0) from ledger l where l.account_id = a.id)`,
      )
      .get()!.n;
    return {
      holds: { settled: byState('settled'), released: byState('released'), open: byState('open') },
      usageRows: db.prepare<[], { n: number }>('select count(*) as n from usage_all').get()!.n,
      balancesConsistent: disagreeing === 0,
    };
  } finally {
    db.close();
  }
}

const mb = (bytes: number | null) => (bytes === null ? null : Math.round(bytes / 1024 / 1024));

function report(r: SlowStreamsResult, writeDocs: boolean, out: (line: string) => void) {
  const everySettled = r.holds.settled === r.requested && r.holds.open === 0 && r.holds.released === 0;
  const header = [
    'streams',
    'words each',
    'held at once',
    'gateway RSS then MB',
    'peak RSS MB',
    'RSS per stream KB',
    'completed',
    'failed',
    'holds settled',
    'open',
    'released',
    'usage rows',
    'balances = ledger',
  ];
  const rows = [
    [
      count(r.requested),
      String(r.wordsPerStream),
      count(r.mostOpenAtOnce),
      String(r.gatewayRssAtMostOpenMb ?? 'n/a'),
      String(r.gatewayPeakRssMb ?? 'n/a'),
      String(r.rssPerStreamKb ?? 'n/a'),
      count(r.completed),
      count(r.failed),
      count(r.holds.settled),
      count(r.holds.open),
      count(r.holds.released),
      count(r.usageRows),
      r.balancesConsistent ? 'yes' : 'NO',
    ],
  ];
  const rssMet = r.gatewayPeakRssMb !== null && r.gatewayPeakRssMb * 1024 * 1024 <= TARGET_RSS_BYTES;
  const verdicts = [
    `peak RSS ≤ 1 GiB while holding ${count(r.mostOpenAtOnce)} streams: ${rssMet ? 'MET' : 'NOT MET'} (${r.gatewayPeakRssMb ?? 'n/a'} MB)`,
    `every stream completed and settled: ${r.failed === 0 && everySettled ? 'MET' : 'NOT MET'} (${count(r.completed)} completed, ${count(r.holds.settled)} settled)`,
    `${count(TARGET_STREAMS)} streams at once: ${r.requested >= TARGET_STREAMS ? 'run as asked' : `${count(r.requested)} run, limited by ${r.limitedBy ?? 'BENCH_SLOW_STREAMS'}`}`,
  ];
  if (r.firstFailure) verdicts.push(`first failure: ${r.firstFailure}`);
  out(`\n${textTable(header, rows, 0)}\n\ntargets:\n  ${verdicts.join('\n  ')}`);
  out(`\nresults written to ${writeJson('slow-streams', r)}`);
  if (writeDocs) {
    const env = r.environment;
    const markdown = [
      `Run of ${describeMachine(env)}; ${fixed(r.seconds, 0)} s in all.`,
      '',
      markdownTable(header, rows, 0),
      '',
      ...verdicts.map((v) => `- ${v}`),
    ].join('\n');
    out(`slow streams written to ${writeMarkdownSection('slow-streams', markdown)}`);
  }
}
