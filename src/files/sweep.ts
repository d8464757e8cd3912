// Expired uploads are deleted by a sweep on every instance: the file on disk first, then its row,
// so a crash between the two leaves a row the next sweep finishes (never a file nothing points at).
// The same sweep removes uploads a crashed process left in the spool folder mid-request, and the
// other rows that expire (console sign-in links and sessions, console/sweep.ts).
import { readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { deleteFile, expiredFiles } from '../store/files.js';
import type { Store } from '../store/open.js';

export interface FileSweepLogger {
  info(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface FileSweeper {
  start(): void;
  /** One sweep now; resolves with the number of files deleted. */
  sweep(now?: number): Promise<number>;
  stop(): Promise<void>;
}

// Rows per query: a sweep after a long outage works through the backlog in short steps.
const BATCH = 100;

export async function deleteExpiredFiles(store: Store, now: number): Promise<number> {
  let deleted = 0;
  for (;;) {
    const batch = await expiredFiles(store.db, { now, limit: BATCH });
    for (const file of batch) {
      await rm(file.storage_path, { force: true });
      if (await deleteFile(store.db, file.id)) deleted++;
    }
    if (batch.length < BATCH) return deleted;
  }
}

/**
 * Spooled uploads older than `maxAgeMs`: no request that could still be using one runs that long
 * (limits.request_timeout_ms), so it was left by a process that died mid-request.
 */
export async function deleteStaleSpooled(dir: string, { now, maxAgeMs }: { now: number; maxAgeMs: number }): Promise<number> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw error;
  }
  let deleted = 0;
  for (const name of names) {
    const file = path.join(dir, name);
    const info = await stat(file).catch(() => undefined);
    if (info?.isFile() && now - info.mtimeMs > maxAgeMs) {
      await rm(file, { force: true });
      deleted++;
    }
  }
  return deleted;
}

export interface FileSweeperOptions {
  store: Store;
  intervalMs: number;
  log: FileSweepLogger;
  /** Where uploads wait while their request runs, and how long one may. */
  spool: { dir: string; maxAgeMs: number };
  /** Other rows that expire (console sign-ins), deleted on the same timer; resolves with how many. */
  expiredRows?: (now: number) => Promise<number>;
}

export function createFileSweeper({ store, intervalMs, log, spool, expiredRows }: FileSweeperOptions): FileSweeper {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<number> | undefined;
  let stopped = false;

  async function sweep(now = Date.now()): Promise<number> {
    try {
      const deleted = await deleteExpiredFiles(store, now);
      const stale = await deleteStaleSpooled(spool.dir, { now, maxAgeMs: spool.maxAgeMs });
      if (deleted > 0 || stale > 0) log.info({ deleted, stale }, 'expired files deleted');
      const rows = (await expiredRows?.(now)) ?? 0;
      if (rows > 0) log.info({ rows }, 'expired rows deleted');
      return deleted;
    } catch (error) {
      log.error({ err: error }, 'deleting expired files failed; the next sweep retries');
      return 0;
    }
  }

  function schedule() {
    if (stopped) return;
    timer = setTimeout(() => {
      running = sweep();
      void running.finally(() => {
        running = undefined;
        schedule();
      });
    }, intervalMs);
    timer.unref();
  }

  return {
    start() {
      stopped = false;
      schedule();
    },
    sweep,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
