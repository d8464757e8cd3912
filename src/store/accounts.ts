// Queries on `accounts`. Balance moves happen only here, each inside the caller's transaction.
import { type Insertable, type Kysely, type Selectable, type SqlBool, sql } from 'kysely';
import { olderThan, type Position } from './keyset.js';
import type { AccountsTable, DB } from './schema.js';

export type AccountRow = Selectable<AccountsTable>;

const COLUMNS = [
  'id',
  'name',
  'balance_micros',
  'held_micros',
  'webhook_secret',
  'created_at',
  'overdraft_micros',
  'livemode',
  'live_account_id',
  'suspended_at',
  'low_balance_micros',
  'low_balance_since',
  'webhook_url',
  'plan',
] as const;

export async function insertAccount(db: Kysely<DB>, row: Insertable<AccountsTable>): Promise<AccountRow> {
  return db.insertInto('accounts').values(row).returning(COLUMNS).executeTakeFirstOrThrow();
}

export async function findAccount(db: Kysely<DB>, id: string): Promise<AccountRow | undefined> {
  return db.selectFrom('accounts').select(COLUMNS).where('id', '=', id).executeTakeFirst();
}

/** The live account's test twin (docs/api.md "Test mode"), if it has one yet. */
export async function findTestTwin(db: Kysely<DB>, liveAccountId: string): Promise<AccountRow | undefined> {
  return db.selectFrom('accounts').select(COLUMNS).where('live_account_id', '=', liveAccountId).executeTakeFirst();
}

/**
 * Inserts the twin unless the live account has one already: the unique index on live_account_id
 * turns a second, concurrent insert into nothing (PostgreSQL waits for the first to commit), and
 * the caller then reads the one that won.
 */
export async function insertTestTwinIfAbsent(db: Kysely<DB>, row: Insertable<AccountsTable>): Promise<void> {
  await db
    .insertInto('accounts')
    .values(row)
    .onConflict((oc) => oc.column('live_account_id').doNothing())
    .execute();
}

/**
 * Suspends (`suspendedAt`) or resumes (null) a live account and its test twin together: a twin's
 * test keys stop with the account's live ones. Returns the ids changed; none when there is no such
 * live account. A suspension keeps its first time.
 */
export async function setAccountSuspended(db: Kysely<DB>, { accountId, suspendedAt }: { accountId: string; suspendedAt: number | null }): Promise<string[]> {
  const rows = await db
    .updateTable('accounts')
    .set({ suspended_at: suspendedAt === null ? null : sql<number>`coalesce(suspended_at, ${suspendedAt})` })
    .where((eb) => eb.or([eb('id', '=', accountId), eb('live_account_id', '=', accountId)]))
    .returning('id')
    .execute();
  return rows.map((row) => row.id);
}

export async function setWebhookSecret(db: Kysely<DB>, { accountId, secret }: { accountId: string; secret: string }): Promise<boolean> {
  const result = await db.updateTable('accounts').set({ webhook_secret: secret }).where('id', '=', accountId).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

// Moves funds from balance to held only if the balance covers them, in one statement: two
// concurrent holds cannot both read the same balance and both succeed.
export async function moveToHeld(db: Kysely<DB>, { accountId, amountMicros }: { accountId: string; amountMicros: number }): Promise<boolean> {
  const result = await db
    .updateTable('accounts')
    .set((eb) => ({
      balance_micros: eb('balance_micros', '-', amountMicros),
      held_micros: eb('held_micros', '+', amountMicros),
    }))
    .where('id', '=', accountId)
    .where('balance_micros', '>=', amountMicros)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * The account read under its row lock: a no-op update locks the row on PostgreSQL and is plain
 * SQL on SQLite too (whose single writer already excludes others), unlike SELECT … FOR UPDATE.
 */
export async function lockAccount(db: Kysely<DB>, id: string): Promise<AccountRow | undefined> {
  return db
    .updateTable('accounts')
    .set((eb) => ({ balance_micros: eb.ref('balance_micros') }))
    .where('id', '=', id)
    .returning(COLUMNS)
    .executeTakeFirst();
}

/** Adds a credit unless balance + held would pass `limitMicros`; undefined when refused or absent. */
export async function creditWithinLimit(
  db: Kysely<DB>,
  { accountId, amountMicros, limitMicros }: { accountId: string; amountMicros: number; limitMicros: number },
): Promise<AccountRow | undefined> {
  return db
    .updateTable('accounts')
    .set((eb) => ({ balance_micros: eb('balance_micros', '+', amountMicros) }))
    .where('id', '=', accountId)
    .where((eb) => eb(eb('balance_micros', '+', eb.ref('held_micros')), '<=', limitMicros - amountMicros))
    .returning(COLUMNS)
    .executeTakeFirst();
}

// Unconditional on purpose: the caller has already bounded the amount (settle caps its charge).
export async function adjustAccount(
  db: Kysely<DB>,
  { accountId, balanceDeltaMicros, heldDeltaMicros }: { accountId: string; balanceDeltaMicros: number; heldDeltaMicros: number },
): Promise<AccountRow | undefined> {
  return db
    .updateTable('accounts')
    .set((eb) => ({
      balance_micros: eb('balance_micros', '+', balanceDeltaMicros),
      held_micros: eb('held_micros', '+', heldDeltaMicros),
    }))
    .where('id', '=', accountId)
    .returning(COLUMNS)
    .executeTakeFirst();
}

export async function findAccountByName(db: Kysely<DB>, name: string): Promise<AccountRow | undefined> {
  return db.selectFrom('accounts').select(COLUMNS).where('name', '=', name).orderBy('created_at').executeTakeFirst();
}

/** `%`, `_` and the escape character itself match only themselves in a LIKE pattern. */
const likeLiteral = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * Accounts newest first, a page at a time (store/keyset.ts), for the operator's list. With
 * `nameContains`, only those whose name contains it, case aside: lower() on both sides, since
 * LIKE ignores case on SQLite but not on PostgreSQL. Reads every row on a search (no index on
 * names): an operator's list of accounts, not a hot path.
 */
export async function listAccounts(
  db: Kysely<DB>,
  { nameContains, olderThan: after, limit }: { nameContains?: string; olderThan?: Position; limit: number },
): Promise<AccountRow[]> {
  return (
    db
      .selectFrom('accounts')
      .select(COLUMNS)
      // Test twins are shown through their live account (test_balance_micros), never as accounts of their own.
      .where('livemode', '=', 1)
      .$if(nameContains !== undefined, (q) => q.where(sql<SqlBool>`lower(name) like ${`%${likeLiteral(nameContains!.toLowerCase())}%`} escape '\\'`))
      .$if(after !== undefined, (q) => q.where(olderThan(after!)))
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .execute()
  );
}
