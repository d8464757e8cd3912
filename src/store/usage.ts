// Queries on `usage`: one row per settled call, what was used and what it cost.
import type { Insertable, Kysely, Selectable } from 'kysely';
import type { DB, UsageTable } from './schema.js';

export type UsageRow = Selectable<UsageTable>;

const COLUMNS = [
  'id',
  'account_id',
  'key_id',
  'hold_id',
  'request_id',
  'model',
  'endpoint',
  'units',
  'amount_micros',
  'created_at',
  'unbilled_micros',
  'flags',
  'client_request_id',
] as const;

export async function insertUsage(db: Kysely<DB>, row: Insertable<UsageTable>): Promise<void> {
  await db.insertInto('usage').values(row).execute();
}

// Newest first; `before` (an instant, exclusive) pages back through older rows.
export async function listUsage(
  db: Kysely<DB>,
  { accountId, limit = 100, before }: { accountId: string; limit?: number; before?: number },
): Promise<UsageRow[]> {
  return db
    .selectFrom('usage')
    .select(COLUMNS)
    .where('account_id', '=', accountId)
    .$if(before !== undefined, (q) => q.where('created_at', '<', before!))
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}
