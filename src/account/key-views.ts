// Keys as their account (or the operator) sees them, each capped key with what it has spent or
// holds this UTC day and month: one read of the counters for the whole list.
import type { Kysely } from 'kysely';
import { hasSpendCap, limitsOf } from '../billing/key-limits.js';
import type { AccountKeyRow } from '../store/api-keys.js';
import { keySpendNow } from '../store/key-spend.js';
import type { DB } from '../store/schema.js';
import { keyView } from './views.js';

export async function keyViewsWithSpend(db: Kysely<DB>, rows: AccountKeyRow[], now = Date.now()) {
  const capped = rows.filter((row) => hasSpendCap(limitsOf(row))).map((row) => row.id);
  const spend = await keySpendNow(db, capped, now);
  return rows.map((row) => keyView(row, spend.get(row.id) ?? null));
}
