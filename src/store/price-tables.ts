// Migration 025: price plans and each account's plan, the operator's price changes, and the prices
// a task was submitted at (billing/price-book.ts). `price_book` holds one version number, raised by
// every change, so each instance reloads its prices only when something changed.
import { sql } from 'kysely';
import type { MigrationDb } from './migration-db.js';

/** A plan: a multiplier for every model, per model, and prices of its own (JSON), as the admin API took them. */
export interface PricePlansTable {
  name: string;
  /** Every model's prices times this, in parts per million (1 000 000: the prices as they are); null: 1. */
  multiplier_ppm: number | null;
  /** JSON object: model id -> multiplier in parts per million, in place of `multiplier_ppm`. */
  model_multipliers: string | null;
  /** JSON object: model id -> a price list (config's `price` shape), in place of any multiplier. */
  prices: string | null;
  updated_at: number;
}

/** A model's new prices from `effective_at` on, until a later change; the history is every row. */
export interface PriceChangesTable {
  id: string;
  model: string;
  /** JSON: a price list (config's `price` shape). */
  price: string;
  effective_at: number;
  created_at: number;
  note: string | null;
}

export interface PriceBookTable {
  id: string;
  version: number;
}

export async function addPriceTables(db: MigrationDb): Promise<void> {
  await db.schema
    .createTable('price_plans')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('multiplier_ppm', 'bigint')
    .addColumn('model_multipliers', 'text')
    .addColumn('prices', 'text')
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('price_changes')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('price', 'text', (c) => c.notNull())
    .addColumn('effective_at', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('note', 'text')
    .execute();
  await db.schema.createIndex('price_changes_model').on('price_changes').columns(['model', 'effective_at']).execute();
  await db.schema
    .createTable('price_book')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('version', 'bigint', (c) => c.notNull())
    .execute();
  await sql`insert into price_book (id, version) values ('book', 0)`.execute(db);
  await db.schema.alterTable('accounts').addColumn('plan', 'text').execute();
  await db.schema.alterTable('tasks').addColumn('prices', 'text').execute();
}
