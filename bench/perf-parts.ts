// `npm run bench -- --perf`: where the gateway's CPU a call goes beyond the billed relay's, as the
// machine sees it. Plain chat at 50 connections through the billed relay (billed-relay.ts: the
// least that billing a call on SQLite takes) and the gateway, round by round, each sampled by
// Linux's `perf record` during its measured runs; each run's samples are split into parts
// (machine-parts.ts) and scaled to the process's CPU time a call from /proc. Unlike --parts (V8's
// own profiler, main thread only), this sees the kernel, SQLite and libc apart from the JavaScript
// that called them, and the collector's and compilers' helper threads.
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { describeRun, runEnvironment, writeJson, writeMarkdownSection } from './docs.js';
import { MACHINE_PARTS, type MachinePart, machinePartsPerCall, noParts, parsePerfReport } from './machine-parts.js';
import type { BenchOptions } from './options.js';
import { cpuMeter } from './proc-stats.js';
import { RELAY_DIR, type StartedRelay, startBilledRelay } from './relays.js';
import { defaultScenario } from './scenarios.js';
import { fixed, markdownTable, textTable } from './table.js';
import { buildDist, startTargets } from './targets.js';
import { makeWorkDir, removeWorkDir } from './work-dir.js';
import { requireWrk, runWrk, wrkLoad } from './wrk.js';

const SCENARIO = 'chat-plain-c50';
/** Node writes /tmp/perf-<pid>.map, which perf reads to name the JIT's code. */
const PERF_MAP_FLAGS = ['--perf-basic-prof'];
const SAMPLES_PER_SECOND = '999';
/**
 * Before its first round each target is loaded this long, beyond the warm-up of every round: the
 * gateway's optimizing compiler is still at work well after a few seconds of load (its compilers
 * took a fifth of a 4-second run's CPU after 2 seconds of warm-up), and that is start-up, not a call.
 */
const FIRST_WARMUP_SECONDS = 10;
const TARGETS = ['billed', 'gateway'] as const;
type Target = (typeof TARGETS)[number];

export interface PerfPartsResults {
  scenario: string;
  calls: Record<Target, number>;
  /** The whole process's CPU µs a call (all threads, user and system), over the measured runs. */
  cpuMicrosPerCall: Record<Target, number>;
  /** µs of that CPU a call, per part. */
  parts: Record<Target, Record<MachinePart, number>>;
}

/** Why perf cannot sample here, or undefined when it can. */
function perfUnavailable(): string | undefined {
  const version = spawnSync('perf', ['--version'], { encoding: 'utf8' });
  if (version.status !== 0) return '--perf needs Linux perf (apt-get install linux-perf)';
  try {
    const paranoid = Number(readFileSync('/proc/sys/kernel/perf_event_paranoid', 'utf8').trim());
    if (paranoid > 2 && process.getuid?.() !== 0) return `--perf needs kernel.perf_event_paranoid of 2 or less (it is ${paranoid})`;
  } catch {
    return '--perf needs Linux (/proc/sys/kernel/perf_event_paranoid)';
  }
  return undefined;
}

/** Samples `pid` into `file` until the returned stop() is called; stop() resolves once the file is written. */
function record(pid: number, file: string): { stop(): Promise<void> } {
  const child = spawn('perf', ['record', '-F', SAMPLES_PER_SECOND, '-p', String(pid), '-o', file], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal })),
  );
  return {
    async stop() {
      child.kill('SIGINT');
      // perf writes its file on SIGINT, and then exits by it or with 0
      const { code, signal } = await exited;
      if (code !== 0 && signal !== 'SIGINT') throw new Error(`perf record exited with ${code ?? signal}: ${stderr.trim()}`);
    },
  };
}

/** Every symbol's share of `file`'s samples. */
function report(file: string) {
  const args = ['report', '-i', file, '--no-children', '--sort', 'sym', '-q', '-g', 'none', '--percent-limit', '0'];
  const result = spawnSync('perf', args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (result.status !== 0) throw new Error(`perf report failed: ${result.stderr}`);
  return parsePerfReport(result.stdout);
}

export async function runPerfPartsBench(options: BenchOptions, interrupted: Promise<never>): Promise<number> {
  const unavailable = perfUnavailable();
  if (unavailable) throw new Error(unavailable);
  const wrk = requireWrk('--perf');
  buildDist();
  const workDir = makeWorkDir();
  const pids: number[] = [];
  try {
    const targets = await startTargets(workDir, interrupted, { gatewayNodeArgs: PERF_MAP_FLAGS });
    let billed: StartedRelay | undefined;
    try {
      billed = await startBilledRelay(targets.urls.direct, workDir, targets.gatewayKey, PERF_MAP_FLAGS);
      const broken = Promise.race([targets.broken, billed.child.died]);
      broken.catch(() => {});
      const scenario = defaultScenario(targets.gatewayKey, SCENARIO);
      const where = { billed: { url: billed.url, pid: billed.child.pid }, gateway: { url: targets.urls.gateway, pid: targets.processes.gateway.pid } };
      pids.push(where.billed.pid, where.gateway.pid);
      // Both take the gateway's call: its key, its body.
      const load = (target: Target, seconds: number) =>
        runWrk(scenario.gateway, { wrk, threads: options.wrkThreads, workDir, broken, url: where[target].url, connections: scenario.connections, seconds });

      const environment = runEnvironment();
      const settings = { rounds: options.rounds, seconds: options.seconds, warmupSeconds: options.warmupSeconds };
      const loadGenerator = wrkLoad(wrk, options.wrkThreads);
      const out = (line: string) => process.stdout.write(`${line}\n`);
      out(`tollroute bench (perf): ${describeRun(environment, settings, loadGenerator, 'the rounds taken together')}; ${SCENARIO}, sampled by perf`);

      const calls = { billed: 0, gateway: 0 };
      const cpuMicros = { billed: 0, gateway: 0 };
      const sums: Record<Target, Record<MachinePart, number>> = { billed: noParts(), gateway: noParts() };
      for (const target of TARGETS) await load(target, FIRST_WARMUP_SECONDS);
      for (let round = 1; round <= options.rounds; round++) {
        for (const target of TARGETS) {
          const warmup = await load(target, options.warmupSeconds);
          const file = path.join(workDir, `${target}-${round}.perf`);
          const sampling = record(where[target].pid, file);
          const cpu = cpuMeter(where[target].pid);
          const run = await load(target, options.seconds);
          const cpuMs = cpu.perRequest(run.requests);
          await sampling.stop();
          const errors = warmup.errors + run.errors;
          if (errors > 0) throw new Error(`${target}: ${errors} of ${warmup.requests + run.requests} requests failed`);
          if (cpuMs === null) throw new Error(`${target}: its CPU time could not be read from /proc`);
          // The relay's own code is its script and the one it imports, both where the bench transpiles them.
          const parts = machinePartsPerCall(report(file), cpuMs * 1000, target === 'billed' ? RELAY_DIR : undefined);
          for (const part of MACHINE_PARTS) sums[target][part] += parts[part] * run.requests;
          calls[target] += run.requests;
          cpuMicros[target] += cpuMs * 1000 * run.requests;
          out(
            `  round ${round}/${options.rounds} ${target.padEnd(8)} ${run.requestsPerSecond.toFixed(0)} calls/s, ${(cpuMs * 1000).toFixed(0)} µs of CPU a call`,
          );
        }
      }
      const perCall = (target: Target) =>
        Object.fromEntries(MACHINE_PARTS.map((part) => [part, sums[target][part] / calls[target]])) as Record<MachinePart, number>;
      const results: PerfPartsResults = {
        scenario: SCENARIO,
        calls,
        cpuMicrosPerCall: { billed: cpuMicros.billed / calls.billed, gateway: cpuMicros.gateway / calls.gateway },
        parts: { billed: perCall('billed'), gateway: perCall('gateway') },
      };
      out(`\n${perfPartsTable(results, 'text')}`);
      out(`\nresults written to ${writeJson('perf', { environment, settings, loadGenerator, ...results }, options.writeDocs)}`);
      if (options.writeDocs) {
        const intro = `Run of ${describeRun(environment, settings, loadGenerator, 'the rounds taken together')}; ${SCENARIO}; µs of CPU a call (all threads).`;
        out(`perf parts written to ${writeMarkdownSection('perf', [intro, '', perfPartsTable(results, 'markdown')].join('\n'))}`);
      }
      return 0;
    } finally {
      await billed?.child.stop();
      await targets.stop();
    }
  } finally {
    // Kept on request: the samples, and the maps that name the JIT's code in them, for `perf report -i`.
    if (removeWorkDir(workDir, 'the samples are in it')) for (const pid of pids) rmSync(`/tmp/perf-${pid}.map`, { force: true });
  }
}

/** Each part's µs a call in the billed relay and the gateway, and the difference; largest difference first. */
export function perfPartsTable(results: PerfPartsResults, format: 'text' | 'markdown'): string {
  const { billed, gateway } = results.parts;
  const byDifference = [...MACHINE_PARTS].sort((a, b) => gateway[b] - billed[b] - (gateway[a] - billed[a]));
  const rows = byDifference.map((part) => [part, fixed(billed[part], 1), fixed(gateway[part], 1), fixed(gateway[part] - billed[part], 1)]);
  const { cpuMicrosPerCall: cpu } = results;
  rows.push(['the whole CPU a call (/proc)', fixed(cpu.billed, 1), fixed(cpu.gateway, 1), fixed(cpu.gateway - cpu.billed, 1)]);
  const header = ['part', 'billed relay µs', 'gateway µs', 'gateway − billed µs'];
  return format === 'markdown' ? markdownTable(header, rows) : textTable(header, rows);
}
