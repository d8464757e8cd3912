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
  /**
   * The CPU's family and model numbers and whether the kernel isolates page tables (Linux only). A
   * virtual machine may name its CPU only "AMD EPYC"; the family tells its generations apart, and
   * page-table isolation makes every system call dearer.
   */
  cpu: CpuDetail;
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
    cpu: cpuDetail(readText('/proc/cpuinfo'), readText('/sys/devices/system/cpu/vulnerabilities/meltdown')),
    platform: `${os.type()} ${os.release()} ${os.arch()}`,
    loadAverage: Number(os.loadavg()[0]?.toFixed(2)),
    commit: currentCommit(),
  };
}

/** The date, code and machine of a run, as every report and Markdown section opens. */
export function describeMachine(env: RunEnvironment): string {
  return `${env.date.slice(0, 10)}, code ${env.commit}, host ${env.host}, Node.js ${env.node}, ${env.cores} cores (${describeCpu(env)}), ${env.platform}, load average ${env.loadAverage} at the start`;
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

export interface CpuDetail {
  family: number | null;
  model: number | null;
  /** null when the kernel does not say (not Linux). */
  pageTableIsolation: boolean | null;
}

/** The family, model and page-table isolation read from `/proc/cpuinfo` and the kernel's Meltdown status. */
export function cpuDetail(cpuinfo: string, meltdownStatus: string): CpuDetail {
  const field = (name: string) => {
    const match = new RegExp(`^${name}\\s*:\\s*(\\d+)`, 'm').exec(cpuinfo);
    return match ? Number(match[1]) : null;
  };
  return {
    family: field('cpu family'),
    model: field('model'),
    pageTableIsolation: meltdownStatus ? /PTI/.test(meltdownStatus) : null,
  };
}

function describeCpu(env: RunEnvironment): string {
  const { family, model, pageTableIsolation } = env.cpu;
  const parts = [env.cpuModel];
  if (family !== null) parts.push(`family ${family}${model === null ? '' : ` model ${model}`}`);
  if (pageTableIsolation !== null) parts.push(`page-table isolation ${pageTableIsolation ? 'on' : 'off'}`);
  return parts.join(', ');
}

const readText = (file: string) => {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
};

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

/**
 * The kind of host a run was made on, by its CPU's maker and family, and whether its kernel isolates
 * page tables: the same code costs a different share of a call on Intel and AMD cores, on two AMD
 * generations, and where every system call also switches page tables, so each kind keeps its own
 * results.
 */
export function hostKind(cpuModel: string, family: number | null = null, pageTableIsolation: boolean | null = null): string {
  const maker = /intel|xeon/i.test(cpuModel) ? 'intel' : /amd|epyc|ryzen/i.test(cpuModel) ? 'amd' : 'other';
  const kind = family === null ? maker : `${maker}-${family}`;
  return pageTableIsolation ? `${kind}-pti` : kind;
}

const MAKER_TITLES: Record<string, string> = { intel: 'Intel hosts', amd: 'AMD hosts', other: 'Other hosts' };

/** `AMD hosts, CPU family 26` for `amd-26`; `…, page-table isolation on` for `amd-26-pti`. */
function hostKindTitle(kind: string): string {
  const [maker = kind, ...rest] = kind.split('-');
  const pti = rest.at(-1) === 'pti' ? rest.pop() : undefined;
  const family = rest[0];
  const title = [MAKER_TITLES[maker] ?? maker];
  if (family) title.push(`CPU family ${family}`);
  if (pti) title.push('page-table isolation on');
  return title.join(', ');
}

/** Where a section for a host kind not measured before goes: before this marker, which stays last. */
const NEW_HOST_KINDS = (name: string) => `<!-- bench:${name}:new-host-kinds -->`;

/**
 * `text` with what lies between `<!-- bench:<name>:start -->` and `<!-- bench:<name>:end -->`
 * replaced by `content`. With `kind`, the section is `<name>-<kind>`: one per host kind, each
 * replaced only by a run on its own kind; a kind's first run adds its section (under a heading)
 * before the name's new-host-kinds marker.
 */
export function replaceSection(text: string, name: string, content: string, kind?: string): string {
  const section = kind ? `${name}-${kind}` : name;
  const start = `<!-- bench:${section}:start -->`;
  const end = `<!-- bench:${section}:end -->`;
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  if (from >= 0 && to > from) return `${text.slice(0, from + start.length)}\n${content.trim()}\n${text.slice(to)}`;
  const slot = kind ? text.indexOf(NEW_HOST_KINDS(name)) : -1;
  if (slot < 0) throw new Error(`${DOCS_MARKDOWN}: the markers ${start} … ${end} are missing`);
  const heading = `#### ${hostKindTitle(kind!)}\n\n${start}\n${content.trim()}\n${end}\n\n`;
  return `${text.slice(0, slot)}${heading}${text.slice(slot)}`;
}

/** Replaces a section of docs/benchmarks.md (see replaceSection); returns the file written. */
export function writeMarkdownSection(name: string, content: string, kind?: string): string {
  writeFileSync(DOCS_MARKDOWN, replaceSection(readFileSync(DOCS_MARKDOWN, 'utf8'), name, content, kind));
  return DOCS_MARKDOWN;
}
