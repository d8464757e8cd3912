// Queries on `usage`: one row per settled call, what was used and what it cost. Rows settled by
// SQLite's hot ledger wait in `usage_recent` until they are moved (store/usage-recent.ts), so every
// reader reads both tables: each branch filtered (and ordered and limited) alone, so the one on
// `usage` keeps its index by account and time.
import { type Insertable, type Kysely, type RawBuilder, type Selectable, type SelectQueryBuilder, sql } from 'kysely';
import { olderThan, type Position } from './keyset.js';
import type { DB, UsageTable } from './schema.js';

/** A usage row as read: its columns, and the JSON of the price list its `price_id` names (null when none). */
export type UsageRow = Selectable<UsageTable> & { prices: string | null };

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
  'upstream_ms',
  'channel',
  'attempts',
  'price_id',
] as const;

/** Which of an account's usage rows: each field given narrows the set; `fromMs` inclusive, `toMs` exclusive. */
export interface UsageFilter {
  accountId: string;
  fromMs?: number;
  toMs?: number;
  model?: string;
  endpoint?: string;
  keyId?: string;
}

export async function insertUsage(db: Kysely<DB>, row: Insertable<UsageTable>): Promise<void> {
  await db.insertInto('usage').values(row).execute();
}

/** The two tables holding usage rows; both have UsageTable's columns. */
type UsageTableName = 'usage' | 'usage_recent';

// The two tables have the same row type; Kysely is shown one name so the builders type-check once.
export const fromUsageTable = (db: Kysely<DB>, table: UsageTableName) => db.selectFrom(table as 'usage');

// Every condition is on the row's own columns: the (account_id, created_at) index serves them all.
const whereUsage =
  ({ accountId, fromMs, toMs, model, endpoint, keyId }: UsageFilter) =>
  <O>(query: SelectQueryBuilder<DB, 'usage', O>) =>
    query
      .where('account_id', '=', accountId)
      .$if(fromMs !== undefined, (q) => q.where('created_at', '>=', fromMs!))
      .$if(toMs !== undefined, (q) => q.where('created_at', '<', toMs!))
      .$if(model !== undefined, (q) => q.where('model', '=', model!))
      .$if(endpoint !== undefined, (q) => q.where('endpoint', '=', endpoint!))
      .$if(keyId !== undefined, (q) => q.where('key_id', '=', keyId!));

/**
 * Newest first; `olderThan` (where the previous page ended) pages back through older rows. Each row
 * brings its price list, joined on the page alone (a price list is kept once, for many rows).
 */
export async function listUsage(
  db: Kysely<DB>,
  { limit = 100, olderThan: after, ...filter }: UsageFilter & { limit?: number; olderThan?: Position },
): Promise<UsageRow[]> {
  const newest = (table: UsageTableName) =>
    fromUsageTable(db, table)
      .select(COLUMNS)
      .$call(whereUsage(filter))
      .$if(after !== undefined, (q) => q.where(olderThan(after!)))
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit);
  // Each branch is wrapped: a branch of a compound select may not have its own order and limit.
  const page = db
    .selectFrom(newest('usage').as('settled'))
    .selectAll()
    .unionAll(db.selectFrom(newest('usage_recent').as('recent')).selectAll())
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit);
  return db
    .selectFrom(page.as('row'))
    .leftJoin('price_lists', 'price_lists.id', 'row.price_id')
    .selectAll('row')
    .select('price_lists.prices')
    .orderBy('row.created_at', 'desc')
    .orderBy('row.id', 'desc')
    .execute();
}

export const MS_PER_DAY = 86_400_000;

export interface SpendRow<Group> {
  group: Group;
  requests: number;
  amountMicros: number;
}

/**
 * Requests and amounts summed per UTC day (days since 1970-01-01: instants are UTC epoch
 * milliseconds, so whole-number division needs no time-zone function in either dialect), in order.
 */
export function spendByDay(db: Kysely<DB>, filter: UsageFilter): Promise<SpendRow<number>[]> {
  return sumUsage(db, filter, sql<number>`created_at / ${sql.lit(MS_PER_DAY)}`);
}

/** Requests and amounts summed per model, in the store's order of model ids. */
export function spendByModel(db: Kysely<DB>, filter: UsageFilter): Promise<SpendRow<string>[]> {
  return sumUsage(db, filter, sql<string>`model`);
}

// The grouping expression is a literal, not a parameter: PostgreSQL must see the selected and the
// grouped expression as the same text. SUM(bigint) is numeric on PostgreSQL: cast back to bigint.
async function sumUsage<Group>(db: Kysely<DB>, filter: UsageFilter, group: RawBuilder<Group>): Promise<SpendRow<Group>[]> {
  const matching = (table: UsageTableName) => fromUsageTable(db, table).select(['created_at', 'model', 'amount_micros']).$call(whereUsage(filter));
  const rows = await db
    .selectFrom(matching('usage').unionAll(matching('usage_recent')).as('matching'))
    .select((eb) => [group.as('grp'), eb.fn.countAll<number>().as('requests'), sql<number>`cast(sum(amount_micros) as bigint)`.as('amount')])
    .groupBy(group)
    .orderBy(group)
    .execute();
  return rows.map((row) => ({ group: row.grp as Group, requests: Number(row.requests), amountMicros: Number(row.amount) }));
}
