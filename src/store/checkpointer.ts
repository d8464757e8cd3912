// Moves SQLite's checkpoints (the only syncs under synchronous=normal) off the event loop, into a
// worker thread with its own connection. The writer keeps a high auto-checkpoint limit as a
// backstop, should the worker ever fall behind or fail.

import { Worker } from 'node:worker_threads';
import { sqliteDriverPath } from './sqlite-driver.js';

/** Pages the write-ahead log may reach before the writer checkpoints by itself (4 KiB pages: 80 MiB). */
export const BACKSTOP_CHECKPOINT_PAGES = 20_000;
// Every 100 ms while the writer is busy (50 commits of the hot ledger since the last checkpoint),
// else every 500 ms. By the clock alone, every 500 ms left checkpoints of thousands of pages whose
// sync stalled the writer's own log writes and set the one-connection p99 (15 ms); every 100 ms
// cut it to 4 ms, but with 9 900 slow streams held (few commits, large ones) the gateway peaked
// some 180 MB higher in RSS. Counting commits checkpoints a busy gateway in small steps and a
// quiet one as before.
const BUSY_COMMITS = 50;
const BUSY_INTERVAL_MS = 100;
const CHECKPOINT_INTERVAL_MS = 500;

// Plain CommonJS, so the same code runs from src/ (under tsx) and from dist/. PASSIVE copies what
// no reader still needs and never waits for or blocks the writer; a failed attempt (busy, a
// failing disk) is simply tried again at the next turn. The commit count is shared memory that the
// writer adds to, so counting costs the writer no message.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const sqlite = new Database(workerData.file);
sqlite.pragma('busy_timeout = 5000');
const commits = new Int32Array(workerData.commits);
let counted = 0;
let checkpointedAt = Date.now();
const timer = setInterval(() => {
  const count = Atomics.load(commits, 0);
  const now = Date.now();
  if (((count - counted) | 0) < workerData.busyCommits && now - checkpointedAt < workerData.intervalMs) return;
  counted = count;
  checkpointedAt = now;
  try { sqlite.pragma('wal_checkpoint(PASSIVE)'); } catch {}
}, workerData.busyIntervalMs);
parentPort.on('message', (message) => {
  if (message !== 'stop') return;
  clearInterval(timer);
  sqlite.close();
  parentPort.close();
});
`;

const driver = sqliteDriverPath;

export interface Checkpointer {
  /** Counts one commit of the writer's towards the next checkpoint. */
  noteCommit(): void;
  stop(): Promise<void>;
}

export interface CheckpointerOptions {
  /** Commits since the last checkpoint that make the writer busy. */
  busyCommits?: number;
  /** How often a busy writer is checkpointed. */
  busyIntervalMs?: number;
  /** How often a quiet one is. */
  intervalMs?: number;
}

export function startCheckpointer(file: string, options: CheckpointerOptions = {}): Checkpointer {
  const commits = new Int32Array(new SharedArrayBuffer(4));
  const workerData = {
    file,
    driver,
    commits: commits.buffer,
    busyCommits: options.busyCommits ?? BUSY_COMMITS,
    busyIntervalMs: options.busyIntervalMs ?? BUSY_INTERVAL_MS,
    intervalMs: options.intervalMs ?? CHECKPOINT_INTERVAL_MS,
  };
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData });
  worker.unref(); // never what keeps the process alive
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  worker.on('error', () => {}); // it exits; the writer's auto-checkpoint takes over
  return {
    noteCommit: () => void Atomics.add(commits, 0, 1),
    async stop() {
      worker.ref(); // until it has exited: a stop awaited with nothing else pending must not end the process first
      worker.postMessage('stop');
      await exited;
    },
  };
}
