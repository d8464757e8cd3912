// One `tollroute serve` process at a time on a fixed port, store and data directory: started,
// killed with SIGKILL (while serving or while still starting), and started again, as a crash and
// an operator's restart would. Its output goes to `<data dir>/gateway.log` for the post-mortem.
import { type ChildProcess, spawn } from 'node:child_process';
import { appendFileSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent } from 'undici';
import { sandboxCatalogue } from '../../src/config/sandbox-catalogue.js';
import { ADMIN_TOKEN } from '../helpers/gateway.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const MAIN = path.join(ROOT, 'src/main.ts');

/** Short recovery, task and webhook timings, so one kill's aftermath plays out in about a second. */
export function writeKillLoopConfig({ dir, sandboxUrl, store, port }: { dir: string; sandboxUrl: string; store: string; port: number }): string {
  const file = path.join(dir, 'tollroute.yaml');
  // JSON is YAML.
  writeFileSync(
    file,
    JSON.stringify({
      ...sandboxCatalogue(sandboxUrl),
      store,
      port,
      admin_token: ADMIN_TOKEN,
      log_level: 'info',
      data_dir: dir,
      network: { allow_private_urls: true },
      limits: { default_rpm: 1_000_000, request_timeout_ms: 20_000, shutdown_grace_ms: 3_000 },
      recovery: { heartbeat_ms: 100, dead_after_ms: 1_000, sweep_ms: 200, progress_interval_ms: 100, settle_retry_ms: 100 },
      tasks: {
        poll_interval_ms: { image: 50, video: 50, erase: 50, minutes: 50 },
        tick_ms: 50,
        lease_ms: 1_000,
        submit_lease_ms: 2_000,
        timeout_ms: 8_000,
        max_generation_attempts: 3,
      },
      webhooks: { retry_delays_ms: [100, 200, 400], timeout_ms: 1_000 },
    }),
  );
  return file;
}

let bundled: Promise<string> | undefined;

/**
 * The gateway as one ES module, built once per run with esbuild (tsx's own dependency): it starts
 * in about half the time `--import tsx` takes, which is most of a 200-kill run. The same source,
 * packages left external; the file sits beside a link to node_modules so they resolve as usual.
 */
function gatewayEntry(): Promise<string> {
  bundled ??= (async () => {
    try {
      const fromTsx = createRequire(createRequire(path.join(ROOT, 'package.json')).resolve('tsx/package.json'));
      const esbuild = fromTsx('esbuild') as { build(options: Record<string, unknown>): Promise<unknown> };
      const dir = mkdtempSync(path.join(tmpdir(), 'tollroute-kill-loop-build-'));
      process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
      symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
      const outfile = path.join(dir, 'main.mjs');
      await esbuild.build({
        entryPoints: [MAIN],
        outfile,
        bundle: true,
        platform: 'node',
        format: 'esm',
        target: 'node20',
        packages: 'external',
        logLevel: 'error',
      });
      return outfile;
    } catch (error) {
      console.warn(`kill loop: bundling failed, running the gateway through tsx (${(error as Error).message})`);
      return MAIN;
    }
  })();
  return bundled;
}

export interface GatewayProcess {
  readonly base: string;
  /** A connection pool for the running process; replaced at each start, so no request goes out on a dead socket. */
  readonly dispatcher: Agent;
  /** Resolves once a process listens (at once if one does now). */
  up(): Promise<void>;
  /** Starts a process and resolves once it listens. */
  start(): Promise<void>;
  /** Starts a process and kills it `afterMs` later, before or just after it listens: a crash during start-up. */
  startAndKill(afterMs: number): Promise<void>;
  /** SIGKILL the running process; resolves when it is gone. */
  kill(): Promise<void>;
  /** SIGTERM: the graceful stop. */
  stop(): Promise<void>;
  readonly starts: number;
  /** Processes that exited without being killed or stopped: each is a finding. */
  readonly unexpectedExits: string[];
}

function deferred() {
  const gate = { promise: Promise.resolve(), resolve: () => {}, open: false };
  gate.promise = new Promise<void>(
    (resolve) =>
      (gate.resolve = () => {
        gate.open = true;
        resolve();
      }),
  );
  return gate;
}

export function gatewayProcess({ configFile, dir, port }: { configFile: string; dir: string; port: number }): GatewayProcess {
  const logFile = path.join(dir, 'gateway.log');
  let child: ChildProcess | undefined;
  let exited: Promise<number | null> = Promise.resolve(null);
  let listening: Promise<void> = Promise.resolve();
  let ready = deferred();
  let dispatcher = new Agent({ connections: 64 });
  let starts = 0;
  let expectingExit = false;
  const unexpectedExits: string[] = [];
  // A run interrupted (Ctrl-C, a failed assertion) leaves no gateway behind.
  process.once('exit', () => child?.kill('SIGKILL'));

  async function spawnServe() {
    const entry = await gatewayEntry();
    starts += 1;
    expectingExit = false;
    const args = entry.endsWith('.ts') ? ['--import', 'tsx', entry] : [entry];
    const proc = spawn(process.execPath, [...args, 'serve', '--config', configFile], {
      env: { ...process.env, TOLLROUTE_DATA_DIR: dir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    appendFileSync(logFile, `=== start ${starts} pid ${proc.pid} at ${new Date().toISOString()}\n`);
    let banner = '';
    proc.stdout!.on('data', (chunk) => appendFileSync(logFile, chunk));
    exited = new Promise((resolve) =>
      proc.once('close', (code, signal) => {
        appendFileSync(logFile, `=== pid ${proc.pid} exited (${signal ?? code}) at ${new Date().toISOString()}\n`);
        // A gateway that dies on its own is a finding, not a kill.
        if (!expectingExit) unexpectedExits.push(`gateway pid ${proc.pid} exited by itself (${signal ?? code}); see ${logFile}`);
        resolve(code);
      }),
    );
    listening = new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`gateway did not start in 30 s; log: ${logFile}`)), 30_000);
      proc.stderr!.on('data', (chunk) => {
        appendFileSync(logFile, chunk);
        banner += chunk;
        if (banner.includes('listening on') && banner.endsWith('\n')) {
          clearTimeout(timer);
          resolve();
        }
      });
      void exited.then((code) => {
        clearTimeout(timer);
        reject(new Error(`gateway exited with ${code} before listening; log: ${logFile}`));
      });
    });
    const gate = ready;
    listening.then(
      () => gate.resolve(),
      () => {},
    );
    child = proc;
  }

  async function end(signal: NodeJS.Signals) {
    if (!child) return;
    expectingExit = true;
    child.kill(signal);
    await exited;
    child = undefined;
    // Callers waiting for a process that was killed while starting keep waiting for the next one.
    if (ready.open) ready = deferred();
    const old = dispatcher;
    dispatcher = new Agent({ connections: 64 });
    await old.destroy().catch(() => {});
  }

  return {
    base: `http://127.0.0.1:${port}`,
    get dispatcher() {
      return dispatcher;
    },
    get starts() {
      return starts;
    },
    unexpectedExits,
    up: () => ready.promise,
    async start() {
      await spawnServe();
      await listening;
    },
    async startAndKill(afterMs) {
      await spawnServe();
      await new Promise((resolve) => setTimeout(resolve, afterMs));
      await end('SIGKILL');
    },
    kill: () => end('SIGKILL'),
    stop: () => end('SIGTERM'),
  };
}
