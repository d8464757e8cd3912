// A V8 CPU profile (`node --cpu-prof`) of one process, its sampled main-thread time split into the
// parts of a call that "What limits each" in docs/benchmarks.md weighs: the process's own code, the
// gateway's hot ledger, the framework, the HTTP client, the sockets, the log, the collector, the
// promise queues, start-up, and Node's core. Each sample goes to the part of the function it was
// taken in (its self time): a native call such as SQLite's `run` counts for the function that made it.
import { readFileSync } from 'node:fs';

/** The fields of a .cpuprofile that are read here. */
export interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string } }[];
  /** µs on the system's monotonic clock (V8 reads CLOCK_MONOTONIC, as process.hrtime does). */
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** A stretch of the monotonic clock in µs (process.hrtime.bigint() / 1000). */
export interface Window {
  from: number;
  to: number;
}

/** Now on the clock a profile's samples are timed by. */
export const monotonicMicros = () => Number(process.hrtime.bigint() / 1000n);

export const PARTS = [
  'own code',
  'hot ledger (its code, SQLite statements, commits)',
  'Fastify (router, validation, body parser)',
  'undici (upstream requests)',
  'socket writes (writev)',
  'log (pino, block writes)',
  'garbage collector',
  'promise and tick queues',
  'module loading (start-up)',
  "Node's core (streams, events, http, buffers, timers)",
  'other packages and natives',
] as const;
export type Part = (typeof PARTS)[number];

const FRAMEWORK = /\/node_modules\/(fastify|find-my-way|ajv|fast-json-stringify|secure-json-parse|avvio|@fastify\/[^/]+)\//;
const HOT_LEDGER = /\/dist\/store\/(hot-ledger\/|usage-recent\.js)|\/node_modules\/better-sqlite3\//;
const LOG = /\/node_modules\/(pino|sonic-boom|thread-stream)\/|\/dist\/cli\/log-destination\.js|\/dist\/http\/request-line\.js/;
const MODULE_LOADING = new Set(['compileSourceTextModule', 'internalModuleStat', 'readFileUtf8', 'openFileHandle', 'wrapSafe']);

/** The part a sampled function belongs to; `ownScript` names the process's own code outside dist/ (a relay's script). */
export function partOf(frame: { functionName: string; url: string }, ownScript?: string): Part {
  const { functionName: name, url } = frame;
  if (url === '') {
    if (name === '(garbage collector)') return 'garbage collector';
    if (name === 'writev') return 'socket writes (writev)';
    if (name === 'writeBuffer' || name === 'writeString') return 'log (pino, block writes)'; // fs.writeSync's bindings: the log's blocks
    if (name === 'runMicrotasks') return 'promise and tick queues';
    if (MODULE_LOADING.has(name)) return 'module loading (start-up)';
    return 'other packages and natives';
  }
  if (ownScript !== undefined && url.endsWith(ownScript)) return 'own code';
  if (LOG.test(url)) return 'log (pino, block writes)';
  if (HOT_LEDGER.test(url)) return 'hot ledger (its code, SQLite statements, commits)';
  if (FRAMEWORK.test(url)) return 'Fastify (router, validation, body parser)';
  if (url.includes('/node_modules/undici/')) return 'undici (upstream requests)';
  if (url.includes('/node_modules/')) return 'other packages and natives';
  if (url.includes('/dist/')) return 'own code';
  if (url.startsWith('node:internal/process/')) return 'promise and tick queues';
  if (url.startsWith('node:internal/modules/') || url.startsWith('node:internal/bootstrap/')) return 'module loading (start-up)';
  if (url.startsWith('node:')) return "Node's core (streams, events, http, buffers, timers)";
  return 'other packages and natives';
}

/**
 * Sampled main-thread time in µs per part (idle left out), of the samples taken inside `windows`
 * (the measured runs: start-up and warm-ups left out), divided by `calls` (the calls of those runs).
 */
export function partsPerCall(profile: CpuProfile, windows: Window[], calls: number, ownScript?: string): Record<Part, number> {
  const frameOf = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const parts = Object.fromEntries(PARTS.map((part) => [part, 0])) as Record<Part, number>;
  let at = profile.startTime;
  let counted = 0;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    if (!windows.some((w) => at >= w.from && at < w.to)) return;
    counted++;
    const frame = frameOf.get(id);
    if (!frame || frame.functionName === '(idle)') return;
    parts[partOf(frame, ownScript)] += delta;
  });
  if (counted === 0) throw new Error('no sample of the profile falls in the measured runs: its clock is not the monotonic one');
  for (const part of PARTS) parts[part] /= calls;
  return parts;
}

export const readProfile = (file: string): CpuProfile => JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;

/** The busy total of a split. */
export const busyPerCall = (parts: Record<Part, number>) => PARTS.reduce((sum, part) => sum + parts[part], 0);
