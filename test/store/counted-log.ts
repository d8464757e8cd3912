// The hot ledger's steps run on a SQLite store file's own connection while its write-ahead log is
// counted in frames (the pages a commit writes), for the tests of migrations that write fewer.
import { statSync } from 'node:fs';
import type BetterSqlite3 from 'better-sqlite3';
import { type SqliteSteps, sqliteSteps } from '../../src/store/hot-ledger/sqlite-steps.js';
import type { HoldEntry, SettleEntry } from '../../src/store/hot-ledger/types.js';
import { Database } from '../../src/store/sqlite-driver.js';

export interface CountedLog {
  sqlite: BetterSqlite3.Database;
  steps: SqliteSteps;
  /** The store's first account, which the steps hold and settle on. */
  accountId: string;
  /** Frames in the log now. */
  frames(): number;
}

/** Runs `measure` with checkpoints off, so the log only grows while it runs; the connection is closed after. */
export function withCountedLog<T>(file: string, measure: (log: CountedLog) => T): T {
  const sqlite = new Database(file);
  try {
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('wal_autocheckpoint = 0');
    const accountId = (sqlite.prepare('select id from accounts limit 1').get() as { id: string }).id;
    const frames = () => (statSync(`${file}-wal`).size - 32) / (4096 + 24);
    return measure({ sqlite, steps: sqliteSteps(sqlite), accountId, frames });
  } finally {
    sqlite.close();
  }
}

/** A hold of 1 000 micros on `accountId`. */
export const holdEntry = (accountId: string, holdId: string, now: number, requestId = 'r'): HoldEntry => ({
  accountId,
  holdId,
  amountMicros: 1_000,
  keyId: null,
  requestId,
  model: 'm',
  endpoint: 'chat',
  now,
  instanceId: 'inst',
  clientRequestId: null,
});

/** Its settle at 10 micros. */
export const settleEntry = (holdId: string, usageId: string, now: number, units = '{}'): SettleEntry => ({
  holdId,
  chargeMicros: 10,
  units,
  requestId: null,
  flags: [],
  usageId,
  now,
});
