// `npm run bench -- --relays`: where a plain call's cost lies. Non-streamed chat at 50 connections
// through the floor, the two minimal JSON relays (minimal-relay.ts: the gateway's HTTP and JSON
// work alone), the billed relay (billed-relay.ts: the Fastify relay plus the least work of billing
// a call on SQLite) and the gateway, round by round, each its own process: requests a second and
// CPU per request, as ratios to the floor. The gap between the floor and the relays is the
// gateway's stack's; between the Fastify relay and the billed one, what billing must cost; between
// the billed relay and the gateway, the most a rewrite of the gateway's call path could save.
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describeRun, type RunEnvironment, runEnvironment, writeJson, writeMarkdownSection } from './docs.js';
import type { LoadRun } from './load-run.js';
import { RELAY_KINDS, type RelayKind } from './minimal-relay.js';
import type { BenchOptions } from './options.js';
import { cpuMeter } from './proc-stats.js';
import { type BenchChild, freePort, ROOT, startNode } from './processes.js';
import { type BenchRequest, defaultScenario } from './scenarios.js';
import { median } from './stats.js';
import { markdownTable, ratio, textTable } from './table.js';
import { buildDist, DIST_MAIN, startTargets, transpiled } from './targets.js';
import { makeWorkDir, removeWorkDir } from './work-dir.js';
import { requireWrk, runWrk, wrkLoad } from './wrk.js';

const SCENARIO = 'chat-plain-c50';
const RELAY_SCRIPT = path.join(ROOT, 'bench', 'minimal-relay.ts');
const BILLED_RELAY_SCRIPT = path.join(ROOT, 'bench', 'billed-relay.ts');
// Under the repository, so that the transpiled relay finds fastify and undici in node_modules.
export const RELAY_DIR = path.join(ROOT, 'node_modules', '.cache', 'tollroute-bench');

const RELAY_TARGETS = ['floor', 'relay-undici', 'relay-fastify', 'relay-billed', 'gateway'] as const;
type RelayTarget = (typeof RELAY_TARGETS)[number];

interface RelayFigures {
  requestsPerSecond: number;
  cpuMsPerRequest: number | null;
  errors: number;
  runs: { round: number; requestsPerSecond: number; cpuMsPerRequest: number | null; errors: number }[];
}

export interface RelaysResults {
  environment: RunEnvironment;
  scenario: string;
  connections: number;
  loadGenerator: string;
  settings: { rounds: number; seconds: number; warmupSeconds: number };
  targets: Record<RelayTarget, RelayFigures>;
}

export interface StartedRelay {
  child: BenchChild;
  url: string;
  /** The relay's script as it runs (its file name tells its own code apart in a CPU profile). */
  script: string;
}

/** A minimal relay of `kind` as its own process, in front of the upstream at `upstreamUrl`; `nodeArgs` go to its node. */
export function startRelay(kind: RelayKind, upstreamUrl: string, nodeArgs: string[] = []): Promise<StartedRelay> {
  return startRelayScript(`${kind} relay`, RELAY_SCRIPT, nodeArgs, (port) => [port, new URL(upstreamUrl).port, kind]);
}

/** A relay script, transpiled, as its own process on a free port; `argsFor(port)`: its arguments. */
async function startRelayScript(name: string, file: string, nodeArgs: string[], argsFor: (port: string) => string[]): Promise<StartedRelay> {
  mkdirSync(RELAY_DIR, { recursive: true });
  const script = transpiled(file, RELAY_DIR);
  const port = await freePort();
  const child = await startNode(name, [...nodeArgs, script, ...argsFor(String(port))]);
  return { child, url: `http://127.0.0.1:${port}`, script };
}

/**
 * The billed relay as its own process, billing `key`'s calls on a SQLite store of its own in
 * `workDir`, made with the gateway's schema by `tollroute migrate`.
 */
export async function startBilledRelay(upstreamUrl: string, workDir: string, key: string, nodeArgs: string[] = []): Promise<StartedRelay> {
  const storeFile = path.join(workDir, 'billed-relay.db');
  const configFile = path.join(workDir, 'billed-relay.json');
  writeFileSync(configFile, JSON.stringify({ store: `sqlite:${storeFile}`, data_dir: workDir }));
  const migrate = spawnSync(process.execPath, [DIST_MAIN, 'migrate', '--config', configFile], { encoding: 'utf8' });
  if (migrate.status !== 0) throw new Error(`tollroute migrate for the billed relay failed: ${migrate.stderr}`);
  return startRelayScript('billed relay', BILLED_RELAY_SCRIPT, nodeArgs, (port) => [port, new URL(upstreamUrl).port, storeFile, key]);
}

export async function runRelaysBench(options: BenchOptions, interrupted: Promise<never>): Promise<number> {
  const wrk = requireWrk('--relays');
  buildDist();
  const workDir = makeWorkDir();
  const started: BenchChild[] = [];
  try {
    const targets = await startTargets(workDir, interrupted);
    try {
      const relays: Record<string, StartedRelay> = {};
      for (const kind of RELAY_KINDS) {
        const relay = await startRelay(kind, targets.urls.direct);
        started.push(relay.child);
        relays[`relay-${kind}`] = relay;
      }
      const billed = await startBilledRelay(targets.urls.direct, workDir, targets.gatewayKey);
      started.push(billed.child);
      relays['relay-billed'] = billed;
      const broken = Promise.race([targets.broken, ...started.map((child) => child.died)]);
      broken.catch(() => {});

      const scenario = defaultScenario(targets.gatewayKey, SCENARIO);
      const where = (target: RelayTarget): { url: string; pid: number; request: BenchRequest } => {
        if (target === 'gateway') return { url: targets.urls.gateway, pid: targets.processes.gateway.pid, request: scenario.gateway };
        if (target === 'floor') return { url: targets.urls.floor, pid: targets.processes.floor.pid, request: scenario.upstream };
        // The billed relay takes the gateway's call (its key, the gateway's body); the others the sandbox's.
        const request = target === 'relay-billed' ? scenario.gateway : scenario.upstream;
        return { url: relays[target]!.url, pid: relays[target]!.child.pid, request };
      };
      const load = (target: RelayTarget, seconds: number): Promise<LoadRun> => {
        const { url, request } = where(target);
        return runWrk(request, { wrk, threads: options.wrkThreads, workDir, broken, url, connections: scenario.connections, seconds });
      };

      const environment = runEnvironment();
      const loadGenerator = wrkLoad(wrk, options.wrkThreads);
      const settings = { rounds: options.rounds, seconds: options.seconds, warmupSeconds: options.warmupSeconds };
      const out = (line: string) => process.stdout.write(`${line}\n`);
      out(`tollroute bench (relays): ${describeRun(environment, settings, loadGenerator)}; ${SCENARIO}`);

      const runs = Object.fromEntries(RELAY_TARGETS.map((t) => [t, [] as RelayFigures['runs']])) as Record<RelayTarget, RelayFigures['runs']>;
      for (let round = 1; round <= options.rounds; round++) {
        for (const target of RELAY_TARGETS) {
          const warmup = await load(target, options.warmupSeconds);
          if (warmup.errors > 0) throw new Error(`${target}: ${warmup.errors} of ${warmup.requests} warm-up requests failed`);
          const cpu = cpuMeter(where(target).pid);
          const run = await load(target, options.seconds);
          const figures = { round, requestsPerSecond: run.requestsPerSecond, cpuMsPerRequest: cpu.perRequest(run.requests), errors: run.errors };
          runs[target].push(figures);
          out(
            `  round ${round}/${options.rounds} ${target.padEnd(13)} ${figures.requestsPerSecond.toFixed(0).padStart(6)} req/s  cpu ${figures.cpuMsPerRequest?.toFixed(3) ?? '?'} ms/req`,
          );
        }
      }
      const results: RelaysResults = {
        environment,
        scenario: SCENARIO,
        connections: scenario.connections,
        loadGenerator,
        settings,
        targets: Object.fromEntries(RELAY_TARGETS.map((t) => [t, summarize(runs[t])])) as Record<RelayTarget, RelayFigures>,
      };
      out(`\n${relaysTable(results, 'text')}`);
      out(`\nresults written to ${writeJson('relays', results, options.writeDocs)}`);
      if (options.writeDocs) {
        const markdown = [`Run of ${describeRun(environment, settings, loadGenerator)}; ${SCENARIO}.`, '', relaysTable(results, 'markdown')].join('\n');
        out(`relays written to ${writeMarkdownSection('relays', markdown)}`);
      }
      return RELAY_TARGETS.some((t) => results.targets[t].errors > 0) ? 1 : 0;
    } finally {
      await Promise.allSettled(started.map((child) => child.stop()));
      await targets.stop();
    }
  } finally {
    removeWorkDir(workDir);
  }
}

function summarize(runs: RelayFigures['runs']): RelayFigures {
  const cpu = runs.map((r) => r.cpuMsPerRequest).filter((v): v is number => v !== null);
  return {
    requestsPerSecond: median(runs.map((r) => r.requestsPerSecond)),
    cpuMsPerRequest: cpu.length > 0 ? median(cpu) : null,
    errors: runs.reduce((sum, r) => sum + r.errors, 0),
    runs,
  };
}

/** Each target's medians, and its ratios to the floor's. */
export function relaysTable(results: RelaysResults, format: 'text' | 'markdown'): string {
  const floor = results.targets.floor;
  const over = (value: number | null, base: number | null) => (value === null || base === null ? null : value / base);
  const rows = RELAY_TARGETS.map((target) => {
    const t = results.targets[target];
    return [
      target,
      t.requestsPerSecond.toFixed(0),
      t.cpuMsPerRequest === null ? '' : (t.cpuMsPerRequest * 1000).toFixed(0),
      ratio(over(t.requestsPerSecond, floor.requestsPerSecond)),
      ratio(over(t.cpuMsPerRequest, floor.cpuMsPerRequest)),
      String(t.errors),
    ];
  });
  const header = ['target', 'req/s', 'CPU µs/req', 'req/s ÷ floor', 'CPU ÷ floor', 'errors'];
  return format === 'text' ? textTable(header, rows) : markdownTable(header, rows);
}
