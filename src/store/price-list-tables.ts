// Migration 029: the price lists usage rows were billed at. A call's prices are taken when its hold
// is made (pipeline/call-price.ts); its usage row names them by `price_id`, and each distinct list
// is kept once in `price_lists`, keyed by a hash of its content (billing/price-lists.ts), so a
// settle writes a short id rather than the list, and two calls at the same prices share one row.
import { type Kysely, sql } from 'kysely';
import type { MigrationDb } from './migration-db.js';
import type { DB } from './schema.js';
import { createUsageAllView, USAGE_COLUMNS } from './usage-recent.js';

export interface PriceListsTable {
  /** `pl_` and the first 16 hex digits of the SHA-256 of the list's canonical JSON. */
  id: string;
  /** The list as JSON (config's `price` shape: unit prices in micros, optional tiers). */
  prices: string;
  created_at: number;
}

export async function addPriceLists(db: MigrationDb): Promise<void> {
  await db.schema
    .createTable('price_lists')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('prices', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint')
    .execute();
  // Nullable: rows settled before, and a crash-recovered stream's whose list is not known.
  // Added at the end of both tables, so their column orders stay the same (usage-recent.ts).
  await db.schema.alterTable('usage').addColumn('price_id', 'text').execute();
  await db.schema.alterTable('usage_recent').addColumn('price_id', 'text').execute();
  // The view lists its columns: made again with the new one.
  await sql`drop view if exists usage_all`.execute(db);
  await createUsageAllView(db, USAGE_COLUMNS);
}

/** Writes the list unless a row of its id exists already (its content is the same: the id is its hash). */
export async function insertPriceList(db: Kysely<DB>, row: PriceListsTable | PriceListsTable[]): Promise<void> {
  await db
    .insertInto('price_lists')
    .values(row)
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
}

export async function priceListExists(db: Kysely<DB>, id: string): Promise<boolean> {
  return (await db.selectFrom('price_lists').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
}
