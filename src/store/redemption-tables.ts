// Migration 026: redemption codes, made in batches by the operator and redeemed by accounts (topups/redemption.ts).
import { sql } from 'kysely';
import type { MigrationDb } from './migration-db.js';

/** A batch of codes the operator made: their amount, count and expiry. */
export interface RedemptionBatchesTable {
  id: string;
  name: string | null;
  amount_micros: number;
  count: number;
  /** After this instant (ms) the batch's codes are refused; null: never. */
  expires_at: number | null;
  created_at: number;
}

/** One code, stored as its hash; redeemed once, by one account. */
export interface RedemptionCodesTable {
  /** sha256 hex of the whole code (`trc-…`); the code itself is never stored. */
  code_hash: string;
  batch_id: string;
  redeemed_by: string | null;
  redeemed_at: number | null;
}

/** Codes an account tried in one window that credited nothing: the wrong-code limit, shared by every instance. */
export interface RedemptionFailuresTable {
  account_id: string;
  /** The window's start (ms, a multiple of the window's length). */
  window_start: number;
  failures: number;
}

export async function addRedemptionCodes(db: MigrationDb): Promise<void> {
  await db.schema
    .createTable('redemption_batches')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text')
    .addColumn('amount_micros', 'bigint', (c) => c.notNull())
    .addColumn('count', 'integer', (c) => c.notNull())
    .addColumn('expires_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('redemption_codes')
    .addColumn('code_hash', 'text', (c) => c.primaryKey())
    .addColumn('batch_id', 'text', (c) => c.notNull().references('redemption_batches.id'))
    .addColumn('redeemed_by', 'text')
    .addColumn('redeemed_at', 'bigint')
    .execute();
  // The operator's list counts each batch's redeemed codes.
  await db.schema.createIndex('redemption_codes_batch').on('redemption_codes').columns(['batch_id', 'redeemed_at']).execute();
  await db.schema
    .createTable('redemption_failures')
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('window_start', 'bigint', (c) => c.notNull())
    .addColumn('failures', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('redemption_failures_pk', ['account_id', 'window_start'])
    .execute();
  // An account's top-ups (store/topup-rows.ts): credits and debits only, a few rows among the many
  // holds and settles, so the index stays small and a call's hold or settle never writes to it.
  await sql`create index ledger_topups on ledger (account_id, id) where kind in ('credit', 'debit')`.execute(db);
}
