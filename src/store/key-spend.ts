// Queries on `key_spend`: what capped keys have spent or hold per period. The counters themselves
// move only inside ledger steps (billing/key-limits.ts); these are the reads and the reset.
import type { Kysely } from 'kysely';
import { spendPeriodsAt } from '../billing/key-limits.js';
import type { DB } from './schema.js';

export interface KeySpend {
  dayMicros: number;
  monthMicros: number;
}

/** This UTC day's and month's spend of each key named; a period without a counter is 0. */
export async function keySpendNow(db: Kysely<DB>, keyIds: string[], now: number): Promise<Map<string, KeySpend>> {
  const spend = new Map<string, KeySpend>();
  if (keyIds.length === 0) return spend;
  const { day, month } = spendPeriodsAt(now);
  const rows = await db
    .selectFrom('key_spend')
    .select(['key_id', 'period', 'spent_micros'])
    .where('key_id', 'in', keyIds)
    .where('period', 'in', [day.period, month.period])
    .execute();
  for (const id of keyIds) spend.set(id, { dayMicros: 0, monthMicros: 0 });
  for (const row of rows) {
    const entry = spend.get(row.key_id)!;
    if (row.period === day.period) entry.dayMicros = Number(row.spent_micros);
    else entry.monthMicros = Number(row.spent_micros);
  }
  return spend;
}

/**
 * Drops a key's counters, so the next capped hold starts them again from the key's usage rows and
 * capped holds (billing/key-limits.ts). Done when a cap is set on a key that had none: its counters,
 * if any, stopped moving when the cap was lifted.
 */
export async function resetKeySpend(db: Kysely<DB>, keyId: string): Promise<void> {
  await db.deleteFrom('key_spend').where('key_id', '=', keyId).execute();
}
