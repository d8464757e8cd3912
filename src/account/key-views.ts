// Keys as their account (or the operator) sees them, each capped key with what it has spent or
// holds this UTC day and month: one read of the counters for the whole list, and the usage rows
// for a period the key keeps no counter for.
import type { Kysely } from 'kysely';
import { hasSpendCap, limitsOf, spendPeriodsAt } from '../billing/key-limits.js';
import type { AccountKeyRow } from '../store/api-keys.js';
import { type KeySpend, keySpendCounters, keySpentSince } from '../store/key-spend.js';
import type { DB } from '../store/schema.js';
import { keyView } from './views.js';

export async function keyViewsWithSpend(db: Kysely<DB>, rows: AccountKeyRow[], now = Date.now()) {
  const capped = rows.filter((row) => hasSpendCap(limitsOf(row)));
  const counters = await keySpendCounters(
    db,
    capped.map((row) => row.id),
    now,
  );
  const { day, month } = spendPeriodsAt(now);
  const spend = new Map<string, KeySpend>();
  for (const row of capped) {
    const counted = counters.get(row.id) ?? {};
    // A counter moves only while its period is capped: a key capped per day alone shows its month
    // from its usage rows (and a capped period not yet counted, from where its first hold will start).
    const spentIn = (startsAt: number, capMicros: number | null, counter: number | undefined) =>
      capMicros !== null && counter !== undefined ? counter : keySpentSince(db, { keyId: row.id, accountId: row.account_id, since: startsAt });
    spend.set(row.id, {
      dayMicros: await spentIn(day.startsAt, row.daily_cap_micros, counted.dayMicros),
      monthMicros: await spentIn(month.startsAt, row.monthly_cap_micros, counted.monthMicros),
    });
  }
  return rows.map((row) => keyView(row, spend.get(row.id) ?? null));
}
