// Queries on `key_spend`: what capped keys have spent or hold per period. The counters themselves
// move only inside ledger steps (billing/key-limits.ts); these are the reads and the reset.
import { type Kysely, sql } from 'kysely';
import { spendPeriodsAt } from '../billing/key-limits.js';
import type { DB } from './schema.js';
import { fromUsageTable } from './usage.js';

export interface KeySpend {
  dayMicros: number;
  monthMicros: number;
}

/**
 * This UTC day's and month's counters of each key named, as far as they exist: a period's counter
 * starts with the key's first capped hold in it (billing/key-limits.ts).
 */
export async function keySpendCounters(db: Kysely<DB>, keyIds: string[], now: number): Promise<Map<string, Partial<KeySpend>>> {
  const counters = new Map<string, Partial<KeySpend>>();
  if (keyIds.length === 0) return counters;
  const { day, month } = spendPeriodsAt(now);
  const rows = await db
    .selectFrom('key_spend')
    .select(['key_id', 'period', 'spent_micros'])
    .where('key_id', 'in', keyIds)
    .where('period', 'in', [day.period, month.period])
    .execute();
  for (const row of rows) {
    const entry = counters.get(row.key_id) ?? {};
    if (row.period === day.period) entry.dayMicros = Number(row.spent_micros);
    else entry.monthMicros = Number(row.spent_micros);
    counters.set(row.key_id, entry);
  }
  return counters;
}

/** This UTC day's and month's counters of each key named; a period without a counter is 0. */
export async function keySpendNow(db: Kysely<DB>, keyIds: string[], now: number): Promise<Map<string, KeySpend>> {
  const counters = await keySpendCounters(db, keyIds, now);
  return new Map(keyIds.map((id) => [id, { dayMicros: 0, monthMicros: 0, ...counters.get(id) }]));
}

/**
 * What a key's calls charged since `since` (both tables of usage rows), plus its holds taken since
 * then and still open: its spend in a period it keeps no counter for.
 */
export async function keySpentSince(db: Kysely<DB>, { keyId, accountId, since }: { keyId: string; accountId: string; since: number }): Promise<number> {
  const usedIn = (table: 'usage' | 'usage_recent') =>
    fromUsageTable(db, table)
      .select(sql<string | number | null>`sum(amount_micros)`.as('total'))
      .where('account_id', '=', accountId)
      .where('key_id', '=', keyId)
      .where('created_at', '>=', since)
      .executeTakeFirst();
  const open = db
    .selectFrom('holds')
    .select(sql<string | number | null>`sum(amount_micros)`.as('total'))
    .where('state', '=', 'open')
    .where('key_id', '=', keyId)
    .where('created_at', '>=', since)
    .executeTakeFirst();
  const totals = await Promise.all([usedIn('usage'), usedIn('usage_recent'), open]);
  return totals.reduce((sum, row) => sum + Number(row?.total ?? 0), 0);
}

/**
 * Drops a key's counters, so the next capped hold starts them again from the key's usage rows and
 * capped holds (billing/key-limits.ts). Done when a cap is set on a key that had none: its counters,
 * if any, stopped moving when the cap was lifted.
 */
export async function resetKeySpend(db: Kysely<DB>, keyId: string): Promise<void> {
  await db.deleteFrom('key_spend').where('key_id', '=', keyId).execute();
}
