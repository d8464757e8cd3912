// Migration 028: each account's low-balance threshold and whether its balance is below it now (billing/low-balance.ts).
import { sql } from 'kysely';
import type { MigrationDb } from './migration-db.js';

export async function addLowBalance(db: MigrationDb): Promise<void> {
  // null: no threshold, no notices.
  await db.schema.alterTable('accounts').addColumn('low_balance_micros', 'bigint').execute();
  // When the current crossing was noticed; null while the funds are at or above the threshold.
  await db.schema.alterTable('accounts').addColumn('low_balance_since', 'bigint').execute();
  // Where account events (account.balance_low) are POSTed; null: nowhere.
  await db.schema.alterTable('accounts').addColumn('webhook_url', 'text').execute();
  // The sweep reads only the accounts that set a threshold, a few among many.
  await db.schema
    .createIndex('accounts_low_balance')
    .on('accounts')
    .column('low_balance_micros')
    .where(sql.ref('low_balance_micros'), 'is not', null)
    .execute();
}
