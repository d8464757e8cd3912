// `npm run bench -- --parts`: where the gateway's time a call goes beyond a minimal relay's. Plain
// chat at 50 connections through the Fastify relay (minimal-relay.ts) and the gateway, each started
// under V8's CPU profiler, loaded in turn round by round; each one's main-thread time sampled during
// its measured runs (start-up and warm-ups left out) is split into parts (profile-parts.ts) and
// divided by the calls of those runs. The
// profiler slows both, and a sample taken in a system call counts as busy, so read the parts as
// sizes beside each other, not as the timed bench's CPU.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { describeRun, runEnvironment, writeJson, writeMarkdownSection } from './docs.js';
import type { LoadRun } from './load-run.js';
import type { BenchOptions } from './options.js';
import { mainThreadCpuTimeMs } from './proc-stats.js';
import { busyPerCall, monotonicMicros, PARTS, type Part, partsPerCall, readProfile, type Window } from './profile-parts.js';
import { type StartedRelay, startRelay } from './relays.js';
import { defaultScenario } from './scenarios.js';
import { fixed, markdownTable, textTable } from './table.js';
import { buildDist, startTargets } from './targets.js';
import { makeWorkDir, removeWorkDir } from './work-dir.js';
import { requireWrk, runWrk, wrkLoad } from './wrk.js';

const SCENARIO = 'chat-plain-c50';
/** One sample every 200 µs: enough samples in a few seconds of load, less overhead than the default 1 ms would spare. */
const profilerFlags = (dir: string) => ['--cpu-prof', `--cpu-prof-dir=${dir}`, '--cpu-prof-interval', '200'];

export interface PartsResults {
  scenario: string;
  calls: { relay: number; gateway: number };
  /** The main thread's CPU time a call in the same runs, from /proc (null off Linux): beside the sampled busy time, what of it was not CPU. */
  mainThreadCpuMicros: { relay: number | null; gateway: number | null };
  /** µs of sampled main-thread time a call, per part. */
  relay: Record<Part, number>;
  gateway: Record<Part, number>;
}

export async function runPartsBench(options: BenchOptions, interrupted: Promise<never>): Promise<number> {
  const wrk = requireWrk('--parts');
  buildDist();
  const workDir = makeWorkDir();
  const profiles = { relay: path.join(workDir, 'profile-relay'), gateway: path.join(workDir, 'profile-gateway') };
  try {
    const targets = await startTargets(workDir, interrupted, { gatewayNodeArgs: profilerFlags(profiles.gateway) });
    let relay: StartedRelay | undefined;
    const calls = { relay: 0, gateway: 0 };
    const windows: Record<'relay' | 'gateway', Window[]> = { relay: [], gateway: [] };
    /** Each measured run's main-thread CPU in ms (null when /proc could not tell). */
    const cpuRunsMs: Record<'relay' | 'gateway', (number | null)[]> = { relay: [], gateway: [] };
    try {
      relay = await startRelay('fastify', targets.urls.direct, profilerFlags(profiles.relay));
      const broken = Promise.race([targets.broken, relay.child.died]);
      broken.catch(() => {});
      const scenario = defaultScenario(targets.gatewayKey, SCENARIO);
      const urls = { relay: relay.url, gateway: targets.urls.gateway };
      const requests = { relay: scenario.upstream, gateway: scenario.gateway };
      const load = (target: 'relay' | 'gateway', seconds: number): Promise<LoadRun> =>
        runWrk(requests[target], { wrk, threads: options.wrkThreads, workDir, broken, url: urls[target], connections: scenario.connections, seconds });

      const environment = runEnvironment();
      const settings = { rounds: options.rounds, seconds: options.seconds, warmupSeconds: options.warmupSeconds };
      const loadGenerator = wrkLoad(wrk, options.wrkThreads);
      const out = (line: string) => process.stdout.write(`${line}\n`);
      out(
        `tollroute bench (parts): ${describeRun(environment, settings, loadGenerator, 'the rounds taken together')}; ${SCENARIO}, both under the CPU profiler`,
      );
      for (let round = 1; round <= options.rounds; round++) {
        for (const target of ['relay', 'gateway'] as const) {
          const warmup = await load(target, options.warmupSeconds);
          const pid = target === 'relay' ? relay.child.pid : targets.processes.gateway.pid;
          const cpuBefore = mainThreadCpuTimeMs(pid);
          const from = monotonicMicros();
          const run = await load(target, options.seconds);
          windows[target].push({ from, to: monotonicMicros() });
          const cpuAfter = mainThreadCpuTimeMs(pid);
          cpuRunsMs[target].push(cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore);
          const errors = warmup.errors + run.errors;
          if (errors > 0) throw new Error(`${target}: ${errors} of ${warmup.requests + run.requests} requests failed`);
          calls[target] += run.requests;
          out(`  round ${round}/${options.rounds} ${target.padEnd(8)} ${run.requestsPerSecond.toFixed(0)} calls/s under the profiler`);
        }
      }
      // The profiles are written as each process exits.
      await relay.child.stop();
      await targets.stop();
      const results: PartsResults = {
        scenario: SCENARIO,
        calls,
        mainThreadCpuMicros: { relay: cpuPerCall(cpuRunsMs.relay, calls.relay), gateway: cpuPerCall(cpuRunsMs.gateway, calls.gateway) },
        relay: partsPerCall(readProfile(mainThreadProfile(profiles.relay)), windows.relay, calls.relay, path.basename(relay.script)),
        gateway: partsPerCall(readProfile(mainThreadProfile(profiles.gateway)), windows.gateway, calls.gateway),
      };
      out(`\n${partsTable(results, 'text')}`);
      out(`\nresults written to ${writeJson('parts', { environment, settings, loadGenerator, ...results }, options.writeDocs)}`);
      if (options.writeDocs) {
        const intro = `Run of ${describeRun(environment, settings, loadGenerator, 'the rounds taken together')}; ${SCENARIO}; µs of sampled main-thread time a call.`;
        out(`parts written to ${writeMarkdownSection('parts', [intro, '', partsTable(results, 'markdown')].join('\n'))}`);
      }
      return 0;
    } finally {
      await relay?.child.stop();
      await targets.stop();
    }
  } finally {
    // Kept on request: the profiles, to be opened in Chrome's DevTools.
    removeWorkDir(workDir, 'the profiles are in it');
  }
}

/** µs of CPU a call over the measured runs; null when any run's CPU could not be read. */
function cpuPerCall(runsMs: (number | null)[], calls: number): number | null {
  if (runsMs.some((ms) => ms === null)) return null;
  return ((runsMs as number[]).reduce((sum, ms) => sum + ms, 0) * 1000) / calls;
}

/**
 * The main thread's profile of the one process that wrote into `dir`: Node names each
 * `CPU.<date>.<time>.<pid>.<thread id>.<sequence>.cpuprofile`, and worker threads (the gateway's
 * checkpointer) write their own.
 */
function mainThreadProfile(dir: string): string {
  const files = readdirSync(dir).filter((name) => /^CPU\.\d+\.\d+\.\d+\.0\.\d+\.cpuprofile$/.test(name));
  if (files.length !== 1) throw new Error(`${dir}: expected one main-thread .cpuprofile, found ${files.length}`);
  return path.join(dir, files[0]!);
}

/** Each part's µs a call for the relay and the gateway, and the difference, the busy total first. */
export function partsTable(results: Pick<PartsResults, 'relay' | 'gateway' | 'mainThreadCpuMicros'>, format: 'text' | 'markdown'): string {
  const row = (name: string, relay: number | null, gateway: number | null) => [
    name,
    fixed(relay, 1),
    fixed(gateway, 1),
    fixed(relay === null || gateway === null ? null : gateway - relay, 1),
  ];
  const rows = [
    row("the main thread's CPU time (/proc)", results.mainThreadCpuMicros.relay, results.mainThreadCpuMicros.gateway),
    row('sampled busy, all parts', busyPerCall(results.relay), busyPerCall(results.gateway)),
    ...PARTS.map((part) => row(part, results.relay[part], results.gateway[part])),
  ];
  const header = ['part', 'relay-fastify µs', 'gateway µs', 'gateway − relay µs'];
  return format === 'text' ? textTable(header, rows) : markdownTable(header, rows);
}
