// The sandbox and the gateway as separate processes, so each one's CPU is its own and the load
// generator (this process) competes with them only as a real client would.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// One way to find a free port, shared with the tests.
export { freePort } from '../test/helpers/processes.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));
const OUTPUT_TAIL_CHARS = 8_000;
const START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 5_000;

// Variables that would override the bench's config file in the children.
const OVERRIDING_ENV = /^(PORT|HOST|SANDBOX_PORT|LOG_LEVEL|TOLLROUTE_.*)$/;

export interface BenchChild {
  name: string;
  pid: number;
  /** Rejects if the process exits before `stop()` was called: a benchmark on a dead process is void. */
  died: Promise<never>;
  /** The last few kilobytes of stdout and stderr, for the failure message. */
  output(): string;
  stop(): Promise<void>;
}

/** Runs `tollroute <args>` and resolves once it prints `listening on`. */
export async function startTollroute(name: string, args: string[]): Promise<BenchChild> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !OVERRIDING_ENV.test(key)));
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-OUTPUT_TAIL_CHARS);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);

  let stopping = false;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const died = new Promise<never>((_, reject) => {
    child.once('exit', (code, signal) => {
      if (!stopping) reject(new Error(`${name} exited (${signal ?? code}) during the benchmark:\n${output}`));
    });
  });
  died.catch(() => {}); // raced by whoever waits on the child; never an unhandled rejection

  let timer: NodeJS.Timeout | undefined;
  const listening = new Promise<void>((resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${name} did not start within ${START_TIMEOUT_MS} ms:\n${output}`)), START_TIMEOUT_MS);
    const onData = () => {
      if (!output.includes('listening on')) return;
      child.stderr!.off('data', onData);
      resolve();
    };
    child.stderr!.on('data', onData);
  });
  try {
    await Promise.race([listening, died]);
  } catch (error) {
    stopping = true;
    child.kill('SIGKILL');
    throw error;
  } finally {
    clearTimeout(timer);
  }

  return {
    name,
    pid: child.pid!,
    died,
    output: () => output,
    async stop() {
      if (stopping) return exited;
      stopping = true;
      if (child.exitCode !== null || child.signalCode !== null) return;
      await terminate(child, exited);
    },
  };
}

/** SIGTERM (the gateway drains and exits), then SIGKILL if it has not gone within the timeout. */
async function terminate(child: ChildProcess, exited: Promise<unknown>): Promise<void> {
  child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), STOP_TIMEOUT_MS)));
  const stillRunning = await Promise.race([exited.then(() => false), timedOut]);
  clearTimeout(timer);
  if (stillRunning) {
    child.kill('SIGKILL');
    await exited;
  }
}

// CPU time and memory of a child, from /proc (Linux); null elsewhere, and the table says n/a.
const TICKS_PER_SECOND = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** User plus system CPU time the process has used so far, in ms. */
export function cpuTimeMs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which is in parentheses and may itself hold spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    return ((utime + stime) * 1000) / TICKS_PER_SECOND;
  } catch {
    return null;
  }
}

export function rssBytes(pid: number): number | null {
  try {
    const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : null;
  } catch {
    return null;
  }
}
