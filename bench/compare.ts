// `npm run bench -- --compare <git ref>`: the gateway as built from the working tree ("after")
// against the gateway built from a commit ("before"), side by side on one sandbox, each with a
// store of its own. Both run through the same rounds in the order A B, B A, A B, … so that neither
// always runs first: on the machines measured, the second of two gateways alternated in a fixed order looked
// 3 to 7 % cheaper whichever build it was. CPU time on
// these machines swings more between minutes than a change to the hot path moves it; two builds
// measured in the same minutes can be compared to a few per cent. After each run, the time to the
// first byte at one connection, as the full bench measures it. Nothing is written to the docs.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describeMachine, type RunEnvironment, runEnvironment, writeJson } from './docs.js';
import type { LoadRun } from './load-run.js';
import type { BenchOptions } from './options.js';
import { cpuMeter } from './proc-stats.js';
import { type BenchChild, ROOT, startNode } from './processes.js';
import { defaultScenario } from './scenarios.js';
import { median } from './stats.js';
import { ratio, textTable } from './table.js';
import { argsOf, buildDist, gatewayNodeArgs, issueKey, prepareTargets } from './targets.js';
import { measureTtfb } from './ttfb.js';
import { makeWorkDir, removeWorkDir } from './work-dir.js';
import { requireWrk, runWrk } from './wrk.js';

export const BUILDS = ['before', 'after'] as const;
export type Build = (typeof BUILDS)[number];

/** Plain chat at one and at 50 connections, unless --only names others. */
const DEFAULT_SCENARIOS = ['chat-plain-c1', 'chat-plain-c50'];

export interface CompareRun {
  round: number;
  requestsPerSecond: number;
  cpuMsPerRequest: number | null;
  p50Ms: number;
  p99Ms: number;
  /** The median time to the first body byte at one connection, after the run. */
  ttfbMs: number;
  errors: number;
}

export interface CompareResults {
  environment: RunEnvironment;
  before: string;
  settings: { rounds: number; seconds: number; warmupSeconds: number; ttfbSeconds: number };
  scenarios: Record<string, Record<Build, CompareRun[]>>;
}

/** Round `round` (from 1) runs the builds in this order: before first in odd rounds, after first in even ones. */
export const roundOrder = (round: number): readonly Build[] => (round % 2 === 1 ? BUILDS : [...BUILDS].reverse());

/**
 * The loads of round `round`, each a group of builds loaded at once: one build at a time in the
 * round's order, or with --paired both together, so that a machine whose speed swings between
 * minutes slows both alike (each then has about half the cores; their CPU a call is compared).
 */
export const roundLoads = (round: number, paired: boolean): readonly (readonly Build[])[] => (paired ? [BUILDS] : roundOrder(round).map((build) => [build]));

/** A round's figures as the progress line prints them. */
const roundLine = (f: CompareRun) =>
  `${f.requestsPerSecond.toFixed(0).padStart(6)} req/s  cpu ${f.cpuMsPerRequest?.toFixed(3) ?? '?'} ms/req  p50 ${f.p50Ms.toFixed(2)}  p99 ${f.p99Ms.toFixed(2)} ms  ttfb ${f.ttfbMs.toFixed(3)} ms`;

/** The commit `ref` names, built into `dir/dist` from a worktree of it (the working tree's node_modules lent). */
function buildCommit(ref: string, dir: string): string {
  const commit = execFileSync('git', ['rev-parse', '--verify', `${ref}^{commit}`], { cwd: ROOT, encoding: 'utf8' }).trim();
  const tree = path.join(dir, 'tree');
  execFileSync('git', ['worktree', 'add', '--detach', tree, commit], { cwd: ROOT, stdio: 'ignore' });
  try {
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(tree, 'node_modules'));
    process.stdout.write(`building ${ref} (${commit.slice(0, 12)}) for comparison…\n`);
    execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json', '--outDir', path.join(dir, 'dist')], { cwd: tree, stdio: 'inherit' });
  } finally {
    execFileSync('git', ['worktree', 'remove', '--force', tree], { cwd: ROOT, stdio: 'ignore' });
  }
  // dist/ finds its packages from where it lies: a link beside it, as in the repository.
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  return commit;
}

export async function runCompareBench(options: BenchOptions, interrupted: Promise<never>): Promise<number> {
  const wrk = requireWrk('--compare');
  if (!options.compare) throw new Error('--compare needs a git ref');
  buildDist();
  const workDir = makeWorkDir('compare');
  const started: BenchChild[] = [];
  const out = (line: string) => process.stdout.write(`${line}\n`);
  try {
    const beforeDir = path.join(workDir, 'before');
    mkdirSync(beforeDir);
    const beforeCommit = buildCommit(options.compare, beforeDir);
    const files = await prepareTargets(workDir);
    const sandbox = await startNode('sandbox', [files.entry, 'sandbox', '--config', files.configFile]);
    started.push(sandbox);
    const base = JSON.parse(readFileSync(files.configFile, 'utf8'));
    const entries: Record<Build, string> = { before: path.join(beforeDir, 'dist', 'main.js'), after: files.entry };
    const ports: Record<Build, number> = { before: files.ports.floor, after: files.ports.gateway }; // the floor's port is free: no floor here
    const gateways = {} as Record<Build, { child: BenchChild; url: string; key: string }>;
    for (const build of BUILDS) {
      const dir = path.join(workDir, build);
      mkdirSync(dir, { recursive: true });
      const configFile = path.join(dir, 'tollroute.json');
      writeFileSync(configFile, JSON.stringify({ ...base, port: ports[build], data_dir: dir, store: `sqlite:${path.join(dir, 'tollroute.db')}` }));
      const child = await startNode(`gateway ${build}`, [...compareNodeArgs(build), entries[build], 'serve', '--config', configFile], {
        stdoutFile: path.join(dir, 'gateway.log'),
      });
      started.push(child);
      const url = `http://127.0.0.1:${ports[build]}`;
      gateways[build] = { child, url, key: await issueKey(url, files.adminToken) };
    }
    const broken = Promise.race([interrupted, ...started.map((child) => child.died)]);
    broken.catch(() => {});

    const names = options.only.length > 0 ? options.only : DEFAULT_SCENARIOS;
    const load = (build: Build, name: string, seconds: number): Promise<LoadRun> => {
      const scenario = defaultScenario(gateways[build].key, name);
      return runWrk(scenario.gateway, {
        wrk,
        threads: options.wrkThreads,
        workDir,
        broken,
        url: gateways[build].url,
        connections: scenario.connections,
        seconds,
      });
    };
    const settings = { rounds: options.rounds, seconds: options.seconds, warmupSeconds: options.warmupSeconds, ttfbSeconds: options.ttfbSeconds };
    const results: CompareResults = { environment: runEnvironment(), before: `${options.compare} (${beforeCommit.slice(0, 12)})`, settings, scenarios: {} };
    out(
      `tollroute bench (compare): ${describeMachine(results.environment)}; before = ${results.before}, after = the working tree; ${settings.rounds} rounds of ${settings.seconds} s${options.paired ? ', both builds loaded at once' : ''}`,
    );
    for (const name of names) {
      const runs: Record<Build, CompareRun[]> = { before: [], after: [] };
      for (const build of BUILDS) await load(build, name, options.warmupSeconds);
      /** One build under load, with its CPU a call (counted before the first-byte run, whose calls it leaves out). */
      const meteredLoad = async (build: Build) => {
        const cpu = cpuMeter(gateways[build].child.pid);
        const run = await load(build, name, options.seconds);
        return { build, run, cpuMsPerRequest: cpu.perRequest(run.requests) };
      };
      /** A loaded build's figures of the round, its first byte timed alone once the round's loads are over. */
      const roundFigures = async (round: number, { build, run, cpuMsPerRequest }: Awaited<ReturnType<typeof meteredLoad>>): Promise<CompareRun> => {
        const ttfb = await measureTtfb(gateways[build].url, defaultScenario(gateways[build].key, name).gateway, { seconds: options.ttfbSeconds, broken });
        return {
          round,
          requestsPerSecond: run.requestsPerSecond,
          cpuMsPerRequest,
          p50Ms: run.latencyMs.p50,
          p99Ms: run.latencyMs.p99,
          ttfbMs: ttfb.firstByteMs.p50,
          errors: run.errors + ttfb.errors,
        };
      };
      for (let round = 1; round <= options.rounds; round++) {
        for (const together of roundLoads(round, options.paired)) {
          for (const loaded of await Promise.all(together.map(meteredLoad))) {
            const figures = await roundFigures(round, loaded);
            runs[loaded.build].push(figures);
            out(`  ${name} round ${round}/${options.rounds} ${loaded.build.padEnd(6)} ${roundLine(figures)}`);
          }
        }
      }
      results.scenarios[name] = runs;
    }
    out(`\n${compareTable(results)}`);
    out(`\nresults written to ${writeJson('compare', results)}`);
    return Object.values(results.scenarios).some((runs) => BUILDS.some((b) => runs[b].some((r) => r.errors > 0))) ? 1 : 0;
  } finally {
    await Promise.allSettled(started.reverse().map((child) => child.stop()));
    removeWorkDir(workDir);
  }
}

/**
 * One build's node flags: the gateway's own, then BENCH_AFTER_NODE_ARGS for the working tree's
 * build only, so that a node flag can be compared on one build (`--compare HEAD`).
 */
export function compareNodeArgs(build: Build, env: NodeJS.ProcessEnv = process.env): string[] {
  return [...gatewayNodeArgs(env), ...(build === 'after' ? argsOf(env.BENCH_AFTER_NODE_ARGS) : [])];
}

/** Per scenario, each build's medians, after ÷ before, and in how many rounds after used less CPU a call. */
export function compareTable(results: CompareResults): string {
  const rows: string[][] = [];
  for (const [name, runs] of Object.entries(results.scenarios)) {
    const figures = (build: Build) => ({
      rps: median(runs[build].map((r) => r.requestsPerSecond)),
      cpu: median(runs[build].map((r) => r.cpuMsPerRequest ?? Number.NaN)),
      p50: median(runs[build].map((r) => r.p50Ms)),
      p99: median(runs[build].map((r) => r.p99Ms)),
      ttfb: median(runs[build].map((r) => r.ttfbMs)),
    });
    const before = figures('before');
    const after = figures('after');
    // Rounds pair up by number: the two builds of a round ran back to back.
    const cheaper = runs.after.filter((r, i) => {
      const then = runs.before[i]?.cpuMsPerRequest;
      return r.cpuMsPerRequest !== null && then !== null && then !== undefined && r.cpuMsPerRequest < then;
    }).length;
    const cells = (f: typeof before) => [f.rps.toFixed(0), (f.cpu * 1000).toFixed(1), f.p50.toFixed(2), f.p99.toFixed(2), f.ttfb.toFixed(3)];
    rows.push([name, 'before', ...cells(before), '']);
    rows.push(['', 'after', ...cells(after), '']);
    const over = (a: number, b: number) => ratio(a / b);
    rows.push([
      '',
      'after ÷ before',
      over(after.rps, before.rps),
      over(after.cpu, before.cpu),
      over(after.p50, before.p50),
      over(after.p99, before.p99),
      over(after.ttfb, before.ttfb),
      `${cheaper} of ${runs.after.length}`,
    ]);
  }
  return textTable(['scenario', 'build', 'req/s', 'CPU µs/req', 'p50 ms', 'p99 ms', 'TTFB ms', 'rounds after used less CPU'], rows, 2);
}
