// SQLite only (migration 017_sqlite_fewer_pages): two tables rebuilt so that a money step writes
// fewer pages of the log. Measured by the log's growth, a hold wrote 8 pages and its settle 9,
// each its own commit when calls come one at a time, and two of them were bookkeeping:
// - ledger's AUTOINCREMENT kept its counter in sqlite_sequence, one more page in every commit
//   that adds a ledger row. Ledger rows are never deleted, so the plain rowid (the largest id
//   plus one) gives the same increasing ids, which the account chain (ledger-rows.ts) relies on.
// - usage_recent, keyed by text, was a rowid table with an index for its key beside it. WITHOUT
//   ROWID keeps the rows in their key's order in one b-tree; the key grows with time, so a settle's
//   row is still an append. (Migration 022 has since dropped its key altogether, below.)
// The ledger bench then took 15 to 34 % more pairs a second on 1 000 accounts.
import { sql } from 'kysely';
import type { MigrationDb } from './migration-db.js';
import { createUsageAllView } from './usage-recent.js';

export async function rebuildForFewerPages(db: MigrationDb): Promise<void> {
  // One transaction (Kysely's migrator opens none on SQLite): a crash leaves either table whole.
  // A table that has its change already is left as it is, so running this again copies nothing.
  await db.transaction().execute(async (trx) => {
    await rebuildTable(trx, 'ledger', (create) => create.replace(/\s+autoincrement\b/i, ''));
    // Only a keyed usage_recent: one that 022 left without a key stays so (WITHOUT ROWID needs a key).
    await rebuildRecentUsage(trx, (create) => (KEYED_BY_ID.test(create) ? withoutRowid(create) : create));
  });
}

/**
 * Rebuilds usage_recent as `change` rewrites it, with the view over it (which names it) made again
 * as it was: its columns are those of the store's schema when it was made (migration 029 adds one).
 */
async function rebuildRecentUsage(trx: MigrationDb, change: (create: string) => string): Promise<void> {
  const { rows } = await sql<{ sql: string }>`select sql from sqlite_master where type = 'view' and name = 'usage_all'`.execute(trx);
  await sql`drop view if exists usage_all`.execute(trx);
  await rebuildTable(trx, 'usage_recent', change);
  if (rows[0]) await sql.raw(rows[0].sql).execute(trx);
  else await createUsageAllView(trx);
}

/** A create statement with WITHOUT ROWID, as it is when it has it already (so a rebuild copies nothing). */
const withoutRowid = (create: string) => (/without\s+rowid\s*$/i.test(create) ? create : `${create} without rowid`);

const KEYED_BY_ID = /"id" text primary key/i;

/**
 * SQLite only (migration 022): usage_recent without a key. Nothing looks a row of it up by id (the
 * readers scan it by account, the mover copies it whole into `usage`, whose own key is the id), and
 * as a WITHOUT ROWID table keyed by text a settle's row went into a b-tree of text keys whose full
 * leaves split by rebalancing with their siblings: about four pages of the log a commit, more than
 * the ledger's three. As a plain rowid table an insert appends to the last page. Measured with
 * `npm run bench -- --compare`: 2 to 6 % less CPU a plain call at 50 connections.
 */
export async function rebuildRecentUsageUnkeyed(db: MigrationDb): Promise<void> {
  await db
    .transaction()
    .execute((trx) => rebuildRecentUsage(trx, (create) => create.replace(KEYED_BY_ID, '"id" text not null').replace(/\s*without\s+rowid\s*$/i, '')));
}

/**
 * SQLite only (migration 021): holds, keyed by text, was a rowid table with an index for its key
 * beside it, so a hold's insert wrote a page of each. WITHOUT ROWID keeps a hold in its key's b-tree
 * alone; ids grow with time (store/ids.ts), so a new hold is still an append, and a settle finds its
 * hold in one search instead of two. No table refers to holds, so it can be rebuilt in place.
 */
export async function rebuildHoldsWithoutRowid(db: MigrationDb): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await rebuildTable(trx, 'holds', withoutRowid);
  });
}

/**
 * Rebuilds `table` from its create statement as `change` rewrites it: its rows copied with their
 * ids, then its indexes and triggers made again as they were. A table the change leaves as it is
 * is not touched (a ledger is every money movement ever made). Run it inside a transaction.
 */
export async function rebuildTable(db: MigrationDb, table: string, change: (create: string) => string): Promise<void> {
  const { rows } = await sql<{ type: string; sql: string }>`select type, sql from sqlite_master where tbl_name = ${table} and sql is not null`.execute(db);
  const create = rows.find((row) => row.type === 'table')?.sql;
  if (!create) throw new Error(`no table ${table} to rebuild`);
  const changed = change(create);
  if (changed === create) return;
  const rebuilt = `${table}_rebuilt`;
  const createRebuilt = changed.replace(/^create\s+table\s+("[^"]+"|\S+)/i, `create table "${rebuilt}"`);
  await sql.raw(createRebuilt).execute(db);
  await sql.raw(`insert into "${rebuilt}" select * from "${table}"`).execute(db);
  await sql.raw(`drop table "${table}"`).execute(db);
  await sql.raw(`alter table "${rebuilt}" rename to "${table}"`).execute(db);
  for (const row of rows) if (row.type === 'index' || row.type === 'trigger') await sql.raw(row.sql).execute(db);
}
