// Usage rows settled by SQLite's hot ledger land first in `usage_recent`, a table without the index
// by account and time, so a settle appends to it instead of writing its account's page of that
// index: with many accounts, one page of the log per settle, about a third of what a hold and settle
// pair wrote. Every few seconds the mover copies them into `usage` sorted by
// account, so an account's page is written once for all its rows of the move, and deletes them, in
// one transaction. Readers read both tables (store/usage.ts); the view `usage_all` is both as one,
// for an operator at the sqlite3 prompt. PostgreSQL has the table too, always empty: its ledger
// writes `usage` directly, and the readers stay one query for both dialects.
import type Database from 'better-sqlite3';
import { sql } from 'kysely';
import type { MigrationDb } from './migration-db.js';

/** The columns usage and usage_recent had when 016 made the view, until 029 added `price_id`. */
const USAGE_COLUMNS_016 =
  'id, account_id, key_id, hold_id, request_id, model, endpoint, units, amount_micros, created_at, unbilled_micros, flags, client_request_id, upstream_ms, channel, attempts';

/** The columns of usage and usage_recent, in the order the hot ledger's usage row gives them. */
export const USAGE_COLUMNS = `${USAGE_COLUMNS_016}, price_id`;

/** Migration 016: the table (the columns of `usage`, keyed by id until 022 dropped the key: sqlite-pages.ts) and the view. */
export async function createRecentUsage(db: MigrationDb): Promise<void> {
  await db.schema
    .createTable('usage_recent')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('key_id', 'text')
    .addColumn('hold_id', 'text')
    .addColumn('request_id', 'text')
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('endpoint', 'text', (c) => c.notNull())
    .addColumn('units', 'text', (c) => c.notNull())
    .addColumn('amount_micros', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('unbilled_micros', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('flags', 'text')
    .addColumn('client_request_id', 'text')
    .addColumn('upstream_ms', 'integer')
    .addColumn('channel', 'text')
    .addColumn('attempts', 'integer')
    .execute();
  await createUsageAllView(db, USAGE_COLUMNS_016);
}

/** The view of both tables as one, for operators and the crash checks; `columns`: those the tables have now. */
export async function createUsageAllView(db: MigrationDb, columns = USAGE_COLUMNS): Promise<void> {
  await sql.raw(`create view usage_all as select ${columns} from usage union all select ${columns} from usage_recent`).execute(db);
}

/**
 * Moves the oldest rows of usage_recent, at most `maxRows`, into usage, in one transaction of its
 * own; how many it moved. Rows are appended, so the smallest rowids are the oldest, and the move
 * takes exactly the rows up to the last of them.
 */
export function recentUsageMover(sqlite: Database.Database, maxRows: number): () => number {
  const lastOfMove = sqlite.prepare('select max(rowid) from (select rowid from usage_recent order by rowid limit ?)').pluck();
  // Sorted by account: each account's rows go to its page of the usage index together.
  const copy = sqlite.prepare(
    `insert into usage (${USAGE_COLUMNS}) select ${USAGE_COLUMNS} from usage_recent where rowid <= ? order by account_id, created_at, id`,
  );
  const clear = sqlite.prepare('delete from usage_recent where rowid <= ?');
  return sqlite.transaction(() => {
    const last = lastOfMove.get(maxRows) as number | null;
    if (last === null) return 0;
    const moved = copy.run(last).changes;
    clear.run(last);
    return moved;
  });
}

/**
 * A move after this many settles, or once this long has passed since the last with any settle
 * between; each move takes at most `rows`, and while rows are left the next commit moves again.
 */
export interface UsageMoveSchedule {
  settles: number;
  ms: number;
  rows?: number;
}

// A row moved costs about 4 µs on the event loop; every 2 s or 16 384 settles keeps readers' scans
// of usage_recent short, while an account's page of the usage index takes a few dozen rows per move
// on 1 000 busy accounts. Moved whole, the rows of 2 s at 8 000 settles
// a second stalled the event loop for about 60 ms, every call and stream in flight with it; 1 024
// rows a move keep each stall near 4 ms, and the commits of a busy gateway drain the rest in turns.
export const MOVE_USAGE: Required<UsageMoveSchedule> = { settles: 16_384, ms: 2_000, rows: 1_024 };

/** The hot ledger's mover: told of each settle, it moves usage_recent into usage when the schedule says. */
export function scheduledUsageMover(
  sqlite: Database.Database,
  schedule: UsageMoveSchedule,
  checkWritable: () => void,
  log?: { warn(obj: object, msg: string): void },
) {
  const maxRows = schedule.rows ?? MOVE_USAGE.rows;
  const move = recentUsageMover(sqlite, maxRows);
  let settlesSinceMove = 0;
  let lastMoveAt = Date.now();
  /** The last move took as many rows as it may: more may wait, and the next commit moves again. */
  let rowsLeft = false;
  return {
    noteSettle() {
      settlesSinceMove += 1;
    },
    /** Moves when due; a move that fails leaves the rows for the next (readers read both). */
    moveIfDue() {
      const due = rowsLeft || (settlesSinceMove > 0 && (settlesSinceMove >= schedule.settles || Date.now() - lastMoveAt >= schedule.ms));
      if (!due) return;
      if (sqlite.inTransaction) return; // a transaction of Kysely's: the move must not become part of it
      settlesSinceMove = 0;
      lastMoveAt = Date.now();
      rowsLeft = false;
      try {
        checkWritable();
        rowsLeft = move() === maxRows;
      } catch (error) {
        settlesSinceMove = 1; // try again at the next schedule
        log?.warn({ err: error }, 'moving usage rows from usage_recent failed; they stay there, readable, until the next move');
      }
    },
  };
}
