// Moves SQLite's checkpoints (the only syncs under synchronous=normal) off the event loop, into a
// worker thread with its own connection. The writer keeps a high auto-checkpoint limit as a
// backstop, should the worker ever fall behind or fail.
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** Pages the write-ahead log may reach before the writer checkpoints by itself (4 KiB pages: 80 MiB). */
export const BACKSTOP_CHECKPOINT_PAGES = 20_000;
// Every 100 ms made each checkpoint smaller and cut the plain-chat p99 at one connection from
// 15 ms to 4 ms, but the gateway holding 9 900 slow streams then peaked at 956-1 120 MB of RSS
// against 741-787 MB at 500 ms (past the 1 GiB target), for a reason not found yet: kept at 500 ms
// until it is (docs/benchmarks.md).
const CHECKPOINT_INTERVAL_MS = 500;

// Plain CommonJS, so the same code runs from src/ (under tsx) and from dist/. PASSIVE copies what
// no reader still needs and never waits for or blocks the writer; a failed attempt (busy, a
// failing disk) is simply tried again at the next interval.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const sqlite = new Database(workerData.file);
sqlite.pragma('busy_timeout = 5000');
const timer = setInterval(() => {
  try { sqlite.pragma('wal_checkpoint(PASSIVE)'); } catch {}
}, workerData.intervalMs);
parentPort.on('message', (message) => {
  if (message !== 'stop') return;
  clearInterval(timer);
  sqlite.close();
  parentPort.close();
});
`;

const driver = createRequire(import.meta.url).resolve('better-sqlite3');

export interface Checkpointer {
  stop(): Promise<void>;
}

export function startCheckpointer(file: string): Checkpointer {
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { file, driver, intervalMs: CHECKPOINT_INTERVAL_MS } });
  worker.unref(); // never what keeps the process alive
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  worker.on('error', () => {}); // it exits; the writer's auto-checkpoint takes over
  return {
    async stop() {
      worker.ref(); // until it has exited: a stop awaited with nothing else pending must not end the process first
      worker.postMessage('stop');
      await exited;
    },
  };
}
