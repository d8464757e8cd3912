// Queries on the accounts' low-balance columns (billing/low-balance.ts). An account's funds are
// balance + held: what it has before the calls running now settle. A crossing is funds below
// low_balance_micros; low_balance_since marks the crossing noticed, so it is told once.
import { type Kysely, type Selectable, type SqlBool, sql } from 'kysely';
import { olderThan, type Position } from './keyset.js';
import type { AccountsTable, DB } from './schema.js';

const COLUMNS = ['id', 'name', 'livemode', 'balance_micros', 'held_micros', 'low_balance_micros', 'low_balance_since', 'webhook_url', 'created_at'] as const;

export type LowBalanceRow = Pick<Selectable<AccountsTable>, (typeof COLUMNS)[number]>;

/** Funds below the threshold (false while there is none: a null compares to nothing). */
const below = sql<SqlBool>`balance_micros + held_micros < low_balance_micros`;
const atOrAbove = sql<SqlBool>`balance_micros + held_micros >= low_balance_micros`;

export async function findLowBalanceState(db: Kysely<DB>, accountId: string): Promise<LowBalanceRow | undefined> {
  return db.selectFrom('accounts').select(COLUMNS).where('id', '=', accountId).executeTakeFirst();
}

/**
 * Sets what is given (undefined leaves a field as it is). Turning the threshold off ends the
 * current crossing too, so one set again later is told afresh. Undefined when there is no such account.
 */
export async function updateLowBalanceSettings(
  db: Kysely<DB>,
  { accountId, thresholdMicros, webhookUrl }: { accountId: string; thresholdMicros?: number | null; webhookUrl?: string | null },
): Promise<LowBalanceRow | undefined> {
  if (thresholdMicros === undefined && webhookUrl === undefined) return findLowBalanceState(db, accountId);
  return db
    .updateTable('accounts')
    .set({
      ...(thresholdMicros !== undefined && { low_balance_micros: thresholdMicros }),
      ...(thresholdMicros === null && { low_balance_since: null }),
      ...(webhookUrl !== undefined && { webhook_url: webhookUrl }),
    })
    .where('id', '=', accountId)
    .returning(COLUMNS)
    .executeTakeFirst();
}

/** Accounts below their threshold whose crossing is not marked yet (one of them, when `accountId` is given). */
export async function unmarkedCrossings(db: Kysely<DB>, { accountId, limit }: { accountId?: string; limit: number }): Promise<string[]> {
  const rows = await db
    .selectFrom('accounts')
    .select('id')
    .where('low_balance_micros', 'is not', null)
    .where('low_balance_since', 'is', null)
    .where(below)
    .$if(accountId !== undefined, (q) => q.where('id', '=', accountId!))
    .limit(limit)
    .execute();
  return rows.map((row) => row.id);
}

/**
 * Marks the account's crossing at `now` if it is below its threshold and not marked: one
 * conditional statement, so of instances racing on one crossing exactly one gets the row (on
 * PostgreSQL the others wait on its row lock, then find it marked). Undefined for the losers.
 */
export async function markCrossing(db: Kysely<DB>, { accountId, now }: { accountId: string; now: number }): Promise<LowBalanceRow | undefined> {
  return db
    .updateTable('accounts')
    .set({ low_balance_since: now })
    .where('id', '=', accountId)
    .where('low_balance_micros', 'is not', null)
    .where('low_balance_since', 'is', null)
    .where(below)
    .returning(COLUMNS)
    .executeTakeFirst();
}

/** Ends the marked crossings whose funds are back at or above the threshold (of one account, when given); their ids. */
export async function clearRecovered(db: Kysely<DB>, { accountId }: { accountId?: string } = {}): Promise<string[]> {
  const rows = await db
    .updateTable('accounts')
    .set({ low_balance_since: null })
    .where('low_balance_micros', 'is not', null)
    .where('low_balance_since', 'is not', null)
    .where(atOrAbove)
    .$if(accountId !== undefined, (q) => q.where('id', '=', accountId!))
    .returning('id')
    .execute();
  return rows.map((row) => row.id);
}

/** Live accounts whose funds are below their threshold now, newest first, a page at a time (store/keyset.ts). */
export async function listBelowThreshold(db: Kysely<DB>, { olderThan: after, limit }: { olderThan?: Position; limit: number }): Promise<LowBalanceRow[]> {
  return db
    .selectFrom('accounts')
    .select(COLUMNS)
    .where('livemode', '=', 1)
    .where('low_balance_micros', 'is not', null)
    .where(below)
    .$if(after !== undefined, (q) => q.where(olderThan(after!)))
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}
