// The load generator: wrk, written in C, so that the client is never what limits a run. A Lua
// script per request sets method, headers and body, and its `done` prints the figures as JSON.
import { execFileSync, spawn } from 'node:child_process';
import { accessSync, constants, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { LoadRun, LoadSpec } from './load-run.js';
import type { BenchRequest } from './scenarios.js';

const RESULT_PREFIX = 'BENCH_JSON ';
// Past this wrk counts a request as timed out: far beyond any answer here, even a 1 MB prompt on a busy machine.
const REQUEST_TIMEOUT = '30s';

/** wrk's path: $BENCH_WRK, else wrk on the PATH; null when there is none (or BENCH_WRK=none). */
export function findWrk(): string | null {
  const chosen = process.env.BENCH_WRK;
  if (chosen === 'none') return null;
  if (chosen) return chosen;
  try {
    const found = execFileSync('sh', ['-c', 'command -v wrk'], { encoding: 'utf8' }).trim();
    accessSync(found, constants.X_OK);
    return found;
  } catch {
    return null;
  }
}

/** wrk's path, for a bench mode (`--compare`) that compares figures an in-process load generator would cap. */
export function requireWrk(mode: string): string {
  const wrk = findWrk();
  if (!wrk) throw new Error(`${mode} needs wrk (apt-get install wrk): the fallback load generator would be the bottleneck here`);
  return wrk;
}

/** How a report names the load: wrk's version and its threads. */
export const wrkLoad = (wrk: string, threads: number) => `${wrkVersion(wrk)} (${threads} thread${threads > 1 ? 's' : ''})`;

export function wrkVersion(wrk: string): string {
  // wrk prints its version in the usage text, and exits 1 for lack of a URL.
  try {
    execFileSync(wrk, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    // "wrk debian/4.1.0-3+b2 [epoll] Copyright …": the name and version only
    const out = String((error as { stdout?: string }).stdout ?? '');
    return out.split(' ').slice(0, 2).join(' ').trim() || 'wrk';
  }
  return 'wrk';
}

/** A Lua string literal: printable ASCII as is, everything else as decimal escapes. */
function luaString(text: string): string {
  let out = '"';
  for (const byte of Buffer.from(text, 'utf8')) {
    const char = String.fromCharCode(byte);
    out += byte === 0x22 || byte === 0x5c ? `\\${char}` : byte >= 0x20 && byte < 0x7f ? char : `\\${byte}`;
  }
  return `${out}"`;
}

// Percentiles in µs from wrk's own histogram; errors.status counts answers with a status of 400 or more.
const DONE_FUNCTION = `
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('${RESULT_PREFIX}{"requests":%d,"durationUs":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"p50":%.1f,"p90":%.1f,"p99":%.1f,"p999":%.1f}\\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency:percentile(99.9)))
end
`;

/** The body is read from its own file: a 1 MB prompt is no fit for a Lua literal. */
function luaScript(request: BenchRequest, bodyFile: string): string {
  const headers = Object.entries(request.headers).map(([name, value]) => `wrk.headers[${luaString(name)}] = ${luaString(value)}`);
  return [
    `wrk.method = ${luaString(request.method)}`,
    ...headers,
    `local file = assert(io.open(${luaString(bodyFile)}, "rb"))`,
    'wrk.body = file:read("*a")',
    'file:close()',
    DONE_FUNCTION,
  ].join('\n');
}

interface WrkFigures {
  requests: number;
  durationUs: number;
  connect: number;
  read: number;
  write: number;
  status: number;
  timeout: number;
  p50: number;
  p90: number;
  p99: number;
  p999: number;
}

export interface WrkOptions extends LoadSpec {
  wrk: string;
  threads: number;
  /** A directory for the script and body files. */
  workDir: string;
  /** Rejects when the run is void (a target died, the bench was interrupted): wrk is stopped. */
  broken: Promise<never>;
}

export async function runWrk(request: BenchRequest, options: WrkOptions): Promise<LoadRun> {
  const stem = path.join(options.workDir, `wrk-${process.hrtime.bigint()}`);
  const bodyFile = `${stem}.body`;
  const scriptFile = `${stem}.lua`;
  writeFileSync(bodyFile, request.body);
  writeFileSync(scriptFile, luaScript(request, bodyFile));
  const threads = Math.max(1, Math.min(options.threads, options.connections));
  const args = ['-t', String(threads), '-c', String(options.connections), '-d', `${options.seconds}s`, '--timeout', REQUEST_TIMEOUT, '-s', scriptFile];
  const child = spawn(options.wrk, [...args, options.url + request.path], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const finished = new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  try {
    const code = await Promise.race([finished, options.broken]);
    const line = stdout.split('\n').find((l) => l.startsWith(RESULT_PREFIX));
    if (code !== 0 || !line) throw new Error(`wrk exited with ${code} and no figures:\n${stdout}${stderr}`);
    return toLoadRun(JSON.parse(line.slice(RESULT_PREFIX.length)) as WrkFigures);
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    rmSync(bodyFile, { force: true });
    rmSync(scriptFile, { force: true });
  }
}

function toLoadRun(f: WrkFigures): LoadRun {
  const seconds = f.durationUs / 1e6;
  const errorKinds = { connect: f.connect, read: f.read, write: f.write, status: f.status, timeout: f.timeout };
  const ms = (us: number) => us / 1000;
  return {
    tool: 'wrk',
    requests: f.requests,
    seconds,
    errors: Object.values(errorKinds).reduce((a, b) => a + b, 0),
    errorKinds,
    requestsPerSecond: f.requests / seconds,
    latencyMs: { p50: ms(f.p50), p90: ms(f.p90), p99: ms(f.p99), p999: ms(f.p999) },
  };
}
