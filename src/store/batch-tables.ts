// Migration 024: batches and their lines, and what a stored file is for (store/batches.ts).
import type { MigrationDb } from './migration-db.js';

export async function addBatches(db: MigrationDb): Promise<void> {
  await db.schema.alterTable('files').addColumn('purpose', 'text').execute();

  await db.schema
    .createTable('batches')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('livemode', 'integer', (c) => c.notNull())
    .addColumn('endpoint', 'text', (c) => c.notNull())
    .addColumn('input_file_id', 'text', (c) => c.notNull())
    .addColumn('completion_window', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('metadata', 'text')
    .addColumn('callback_url', 'text')
    .addColumn('output_file_id', 'text')
    .addColumn('error_file_id', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('in_progress_at', 'bigint')
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('finalizing_at', 'bigint')
    .addColumn('completed_at', 'bigint')
    .addColumn('expired_at', 'bigint')
    .addColumn('cancelling_at', 'bigint')
    .addColumn('cancelled_at', 'bigint')
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', 'bigint')
    .execute();
  // A listing reads the account's newest first; the runner reads the batches still to finish.
  await db.schema.createIndex('batches_account_created').on('batches').columns(['account_id', 'created_at']).execute();
  await db.schema.createIndex('batches_status').on('batches').column('status').execute();

  await db.schema
    .createTable('batch_lines')
    .addColumn('batch_id', 'text', (c) => c.notNull())
    .addColumn('line_no', 'integer', (c) => c.notNull())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('custom_id', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('owner', 'text')
    .addColumn('started_at', 'bigint')
    .addColumn('finished_at', 'bigint')
    .addColumn('request_id', 'text')
    .addColumn('status_code', 'integer')
    .addColumn('response', 'text')
    .addColumn('error_code', 'text')
    .addColumn('error_message', 'text')
    .addColumn('input_tokens', 'bigint')
    .addColumn('output_tokens', 'bigint')
    .addPrimaryKeyConstraint('batch_lines_pk', ['batch_id', 'line_no'])
    .execute();
  // The claim takes a batch's pending lines in order; the sweep finds running lines of dead instances.
  await db.schema.createIndex('batch_lines_status').on('batch_lines').columns(['batch_id', 'status', 'line_no']).execute();
  await db.schema.createIndex('batch_lines_running').on('batch_lines').columns(['status', 'account_id']).execute();
}
