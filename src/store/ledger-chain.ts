// SQLite only: an account's ledger rows are found by a chain instead of an index by account. Each
// row names the account's previous row (prev_id) and the account row names its latest
// (last_ledger_id); ledger-rows.ts follows it. Every writer of a ledger row keeps the chain in the
// same transaction: the hot ledger in its steps' SQL (hot-ledger/sqlite-step-triggers.ts), every
// other writer through `insertLedgerRow` (ledger-rows.ts), which calls `chainLedgerRowIn` here.
import { type Kysely, SqliteAdapter, sql } from 'kysely';
import type { MigrationDb } from './migration-db.js';
import type { DB } from './schema.js';

/** Whether `db` (a store's handle or a transaction of it) runs on SQLite. */
export const isSqlite = (db: Kysely<DB>): boolean => db.getExecutor().adapter instanceof SqliteAdapter;

/** The account's latest ledger row, which a new row of it follows: the value of its prev_id. */
export const lastLedgerRowOf = (accountId: string) => sql<number | null>`(select last_ledger_id from accounts where id = ${accountId})`;

/** Points the account at its new latest row; in the transaction that inserted the row after `lastLedgerRowOf`. */
export async function chainLedgerRowIn(trx: Kysely<DB>, accountId: string, ledgerId: number): Promise<void> {
  await sql`update accounts set last_ledger_id = ${ledgerId} where id = ${accountId}`.execute(trx);
}

// Migration 015. The index put each new row on its account's own page, so a batch of steps on many
// accounts wrote a page per account to the log, the largest cost of the ledger bench on 1 000
// accounts (`npm run bench -- --ledger`). With the chain an insert is an append, and the account row,
// which every money step writes anyway, carries the link. PostgreSQL keeps its index: there a write
// to the account row per ledger row would undo the hot account's reserved slices. The chain was
// first kept by a trigger (migration 030 drops it).
export async function chainLedgerByAccount(db: MigrationDb): Promise<void> {
  await db.schema.alterTable('ledger').addColumn('prev_id', 'integer').execute();
  await db.schema.alterTable('accounts').addColumn('last_ledger_id', 'integer').execute();
  // Rows written before: chained through the index, which goes only once they are.
  await sql`update ledger set prev_id = (select max(p.id) from ledger p where p.account_id = ledger.account_id and p.id < ledger.id)`.execute(db);
  await sql`update accounts set last_ledger_id = (select max(id) from ledger where ledger.account_id = accounts.id)`.execute(db);
  await sql`
    create trigger ledger_account_chain after insert on ledger begin
      update ledger set prev_id = (select last_ledger_id from accounts where id = new.account_id) where id = new.id;
      update accounts set last_ledger_id = new.id where id = new.account_id;
    end`.execute(db);
  await db.schema.dropIndex('ledger_account_id').execute();
}

// Migration 018: the hot ledger chained its own rows, and the trigger, which wrote each of its rows
// and their account a second time (about an eighth of the ledger bench's time), ran only for rows
// inserted without prev_id.
export async function chainOnlyUnchainedRows(db: MigrationDb): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await sql`drop trigger ledger_account_chain`.execute(trx);
    await sql`
    create trigger ledger_account_chain after insert on ledger when new.prev_id is null begin
      update ledger set prev_id = (select last_ledger_id from accounts where id = new.account_id) where id = new.id;
      update accounts set last_ledger_id = new.id where id = new.account_id;
    end`.execute(trx);
  });
}

// Migration 030: every writer chains its rows itself, and the trigger goes. Though its `when` was
// false for the hot ledger's rows, SQLite still ran its program for each of them, 0.6 µs a row. A
// row written by hand must now set prev_id and the account's last_ledger_id as insertLedgerRow does.
export async function dropLedgerChainTrigger(db: MigrationDb): Promise<void> {
  await sql`drop trigger if exists ledger_account_chain`.execute(db);
}
