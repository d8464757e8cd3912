// Each target as a separate process, so each one's CPU and memory are its own and the load
// generator competes with them only as a real client would.
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
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
  /** The last few kilobytes of its stderr (and stdout, unless that goes to a file). */
  output(): string;
  stop(): Promise<void>;
}

export interface ChildOptions {
  /** Where stdout goes (a log file); kept in memory with stderr when absent. */
  stdoutFile?: string;
  /** How long it may take to start (default 30 s). */
  startTimeoutMs?: number;
}

/** Runs `node <args>` from the repository root and resolves once it prints `listening on` on stderr. */
export async function startNode(name: string, args: string[], options: ChildOptions = {}): Promise<BenchChild> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !OVERRIDING_ENV.test(key)));
  const stdoutFd = options.stdoutFile ? openSync(options.stdoutFile, 'a') : undefined;
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', stdoutFd ?? 'pipe', 'pipe'] });
  const startTimeoutMs = options.startTimeoutMs ?? START_TIMEOUT_MS;
  if (stdoutFd !== undefined) closeSync(stdoutFd); // the child has its own copy
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-OUTPUT_TAIL_CHARS);
  };
  child.stdout?.on('data', keep);
  child.stderr!.on('data', keep);

  let stopping = false;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const died = new Promise<never>((_, reject) => {
    child.once('exit', (code, signal) => {
      // tollroute exits with 0 only from its SIGTERM/SIGINT handler: the bench had not asked it to.
      const outside = code === 0 || signal === 'SIGTERM' || signal === 'SIGINT' ? ', stopped by a signal from outside the bench' : '';
      if (!stopping) reject(new Error(`${name} exited (${signal ?? code}${outside}) during the benchmark:\n${output}`));
    });
  });
  died.catch(() => {}); // raced by whoever waits on the child; never an unhandled rejection

  let timer: NodeJS.Timeout | undefined;
  const listening = new Promise<void>((resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${name} did not start within ${startTimeoutMs} ms:\n${output}`)), startTimeoutMs);
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

// One way to find a free port, shared with the tests.
export { freePort } from '../test/helpers/processes.js';
