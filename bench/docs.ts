// Where results go: the full figures to a JSON file in the temporary directory, every run; with
// --write-docs, also the mode's generated section of docs/benchmarks.md (between markers, so the
// prose around it is left as written).
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from './processes.js';

export type ResultSection = 'results' | 'sweep' | 'ledger' | 'slow-streams' | 'hot-account' | 'compare';

const DOCS_MARKDOWN = path.join(ROOT, 'docs', 'benchmarks.md');

/** What every result set says about how it was made. */
export interface RunEnvironment {
  date: string;
  /** The machine's name and CPU model: figures from two machines are not comparable. */
  host: string;
  node: string;
  cores: number;
  cpuModel: string;
  platform: string;
  /** The machine's 1-minute load average when the run began: other work on it skews every figure. */
  loadAverage: number;
  /** The code measured: the commit, `+changes` when the work tree differed from it. */
  commit: string;
}

export function runEnvironment(): RunEnvironment {
  return {
    date: new Date().toISOString(),
    host: os.hostname(),
    node: process.version,
    cores: os.cpus().length,
    cpuModel: os.cpus()[0]?.model.trim() ?? 'unknown',
    platform: `${os.type()} ${os.release()} ${os.arch()}`,
    loadAverage: Number(os.loadavg()[0]?.toFixed(2)),
    commit: currentCommit(),
  };
}

/** The date, code and machine of a run, as every report and Markdown section opens. */
export function describeMachine(env: RunEnvironment): string {
  return `${env.date.slice(0, 10)}, code ${env.commit}, host ${env.host}, Node.js ${env.node}, ${env.cores} cores (${env.cpuModel}), ${env.platform}, load average ${env.loadAverage} at the start`;
}

/**
 * A timed run's machine, code and settings, as its report and its Markdown section open;
 * `overRounds` says how the rounds make one figure.
 */
export function describeRun(
  env: RunEnvironment,
  s: { rounds: number; seconds: number; warmupSeconds: number; processWarmupSeconds?: number },
  loadGenerator: string,
  overRounds = 'medians over rounds',
): string {
  const processWarmup = s.processWarmupSeconds ? `each target first warmed with every scenario's call for ${s.processWarmupSeconds} s; ` : '';
  return (
    `${describeMachine(env)}; ` +
    `${processWarmup}${s.rounds} round${s.rounds === 1 ? '' : 's'} of ${s.seconds} s after a ${s.warmupSeconds} s warm-up, ${overRounds}; load: ${loadGenerator}`
  );
}

function currentCommit(): string {
  const git = (...args: string[]) => spawnSync('git', args, { cwd: ROOT, encoding: 'utf8' });
  const head = git('rev-parse', '--short', 'HEAD');
  if (head.status !== 0) return 'unknown';
  const changed = git('status', '--porcelain', '--untracked-files=no', '--', 'src').stdout.trim() !== '';
  return `${head.stdout.trim()}${changed ? '+changes' : ''}`;
}

/** Writes one section's full results as JSON in the temporary directory; returns the file written. */
export function writeJson(section: ResultSection, data: unknown): string {
  const file = path.join(os.tmpdir(), 'tollroute-bench', `latest-${section}.json`);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(data, null, 2)}\n`);
  return file;
}

/** Replaces what lies between `<!-- bench:<name>:start -->` and `<!-- bench:<name>:end -->` in docs/benchmarks.md. */
export function writeMarkdownSection(name: string, content: string): string {
  const start = `<!-- bench:${name}:start -->`;
  const end = `<!-- bench:${name}:end -->`;
  const text = readFileSync(DOCS_MARKDOWN, 'utf8');
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  if (from < 0 || to < from) throw new Error(`${DOCS_MARKDOWN}: the markers ${start} … ${end} are missing`);
  writeFileSync(DOCS_MARKDOWN, `${text.slice(0, from + start.length)}\n${content.trim()}\n${text.slice(to)}`);
  return DOCS_MARKDOWN;
}
