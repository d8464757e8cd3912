// Running the real `tollroute` command line as a separate process, as an operator would.
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

const MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url));

/** What `--import` takes to run a TypeScript file in a child process, as the test runner runs the tests. */
export const LOAD_TYPESCRIPT = new URL('../load-typescript.mjs', import.meta.url).href;

/**
 * A port that nothing listens on, picked below the kernel's ephemeral range. A port from
 * `listen(0)` is itself ephemeral: between our close and the caller's listen, any outgoing
 * connection on the machine may take it as its source port (EADDRINUSE). Ports below the
 * range are never handed out that way.
 */
export async function freePort(): Promise<number> {
  const lowestEphemeral = ephemeralRangeStart();
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = lowestEphemeral - 1 - Math.floor(Math.random() * 12_000);
    if (await canListen(port)) return port;
  }
  return listenOnce(0);
}

function ephemeralRangeStart(): number {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 32_768;
  } catch {
    return 32_768;
  }
}

function canListen(port: number): Promise<boolean> {
  return listenOnce(port).then(
    () => true,
    () => false,
  );
}

function listenOnce(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const bound = (server.address() as { port: number }).port;
      server.close(() => resolve(bound));
    });
  });
}

/** Runs `tollroute <args>` to completion; resolves with its exit code and output. */
export function runCli(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', LOAD_TYPESCRIPT, MAIN, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

export interface ServingProcess {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  exited: Promise<number | null>;
}

/**
 * Starts `tollroute serve` and resolves once its banner says it listens: from the sources, or with
 * `entry` (dist/main.js) the build, as `npm start` runs it; `nodeArgs` go to node itself.
 */
export async function startServe(
  env: Record<string, string>,
  args: string[] = [],
  { entry, nodeArgs = [], startTimeoutMs = 20_000 }: { entry?: string; nodeArgs?: string[]; startTimeoutMs?: number } = {},
): Promise<ServingProcess> {
  const command = [...nodeArgs, ...(entry ? [entry, 'serve', ...args] : ['--import', LOAD_TYPESCRIPT, MAIN, 'serve', ...args])];
  const child = spawn(process.execPath, command, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    // A gateway that has not started in time is stopped: left running, it would keep the test file alive.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`serve did not start within ${startTimeoutMs} ms: ${stderr}`));
    }, startTimeoutMs);
    child.stderr!.on('data', (chunk) => {
      stderr += chunk;
      // The banner is written in one piece, so its end means every line of it is here.
      if (stderr.includes('listening on') && stderr.endsWith('\n')) {
        clearTimeout(timer);
        resolve();
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code}: ${stderr}`));
    });
  });
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}
