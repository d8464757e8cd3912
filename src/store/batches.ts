// Queries on `batches`: a batch is made with all its lines (store/batch-lines.ts), finished by one
// instance under a lease, and read by its account.
import { type Insertable, type Kysely, type Selectable, sql } from 'kysely';
import { olderThan, type Position } from './keyset.js';
import type { BatchesTable, BatchLinesTable, DB } from './schema.js';

export type BatchRow = Selectable<BatchesTable>;
export type BatchLineRow = Selectable<BatchLinesTable>;
export type NewBatchLine = Pick<BatchLineRow, 'line_no' | 'custom_id' | 'url' | 'body'>;

/** Batches whose lines may still run or whose files are still to be written. */
export const UNFINISHED_BATCH_STATUSES = ['in_progress', 'finalizing', 'cancelling'];

// Rows per insert: 6 values each stays far below SQLite's and PostgreSQL's limits on parameters.
const INSERT_CHUNK = 500;

/** The batch and all its lines, pending, in one transaction. */
export async function insertBatch(db: Kysely<DB>, batch: Insertable<BatchesTable>, lines: readonly NewBatchLine[]): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx.insertInto('batches').values(batch).execute();
    for (let start = 0; start < lines.length; start += INSERT_CHUNK) {
      const rows = lines.slice(start, start + INSERT_CHUNK).map((line) => ({
        ...line,
        batch_id: batch.id,
        account_id: batch.account_id,
        status: 'pending',
      }));
      await trx.insertInto('batch_lines').values(rows).execute();
    }
  });
}

export async function findBatch(db: Kysely<DB>, id: string): Promise<BatchRow | undefined> {
  return db.selectFrom('batches').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The account's own batch; another account's is answered exactly like a missing one. */
export async function findAccountBatch(db: Kysely<DB>, { accountId, id }: { accountId: string; id: string }): Promise<BatchRow | undefined> {
  return db.selectFrom('batches').selectAll().where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst();
}

/** The account's batches newest first; `olderThan` pages back. */
export async function listAccountBatches(
  db: Kysely<DB>,
  { accountId, olderThan: after, limit }: { accountId: string; olderThan?: Position; limit: number },
): Promise<BatchRow[]> {
  return db
    .selectFrom('batches')
    .selectAll()
    .where('account_id', '=', accountId)
    .$if(after !== undefined, (q) => q.where(olderThan(after!)))
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

/** Batches not finished yet, oldest first (the runner's work). */
export async function unfinishedBatches(db: Kysely<DB>, limit: number): Promise<BatchRow[]> {
  return db.selectFrom('batches').selectAll().where('status', 'in', UNFINISHED_BATCH_STATUSES).orderBy('created_at').orderBy('id').limit(limit).execute();
}

/** cancelling, from a state still running lines; undefined when the batch is not the account's or has ended. */
export async function markCancelling(db: Kysely<DB>, { accountId, id, now }: { accountId: string; id: string; now: number }): Promise<BatchRow | undefined> {
  return db
    .updateTable('batches')
    .set({ status: 'cancelling', cancelling_at: now })
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .where('status', 'in', ['validating', 'in_progress'])
    .returningAll()
    .executeTakeFirst();
}

/** Marks in-progress batches past their window as expiring; answers their ids. */
export async function markExpiring(db: Kysely<DB>, now: number): Promise<string[]> {
  const rows = await db
    .updateTable('batches')
    .set({ expired_at: now })
    .where('status', '=', 'in_progress')
    .where('expired_at', 'is', null)
    .where('expires_at', '<=', now)
    .returning('id')
    .execute();
  return rows.map((row) => row.id);
}

/**
 * Takes the finishing of a batch whose lines have all ended, for `owner` until `now + leaseMs`
 * (an in-progress batch becomes finalizing). Undefined when a line is still to end, another
 * instance holds the lease, or the batch already ended.
 */
export async function claimFinishing(
  db: Kysely<DB>,
  { id, owner, now, leaseMs }: { id: string; owner: string; now: number; leaseMs: number },
): Promise<BatchRow | undefined> {
  return db
    .updateTable('batches')
    .set({
      status: sql`case when status = 'in_progress' then 'finalizing' else status end`,
      finalizing_at: sql`case when status = 'in_progress' then ${now} else finalizing_at end`,
      lease_owner: owner,
      lease_until: now + leaseMs,
    })
    .where('id', '=', id)
    .where('status', 'in', UNFINISHED_BATCH_STATUSES)
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('batch_lines')
            .select('batch_lines.line_no')
            .where('batch_lines.batch_id', '=', id)
            .where('batch_lines.status', 'in', ['pending', 'running']),
        ),
      ),
    )
    .returningAll()
    .executeTakeFirst();
}

/** The batch's end: its final state and files, if `owner` still holds its lease. Pass a transaction to enqueue its webhook with it. */
export async function finishBatch(
  db: Kysely<DB>,
  {
    id,
    owner,
    status,
    now,
    outputFileId,
    errorFileId,
  }: { id: string; owner: string; status: 'completed' | 'expired' | 'cancelled'; now: number; outputFileId: string | null; errorFileId: string | null },
): Promise<BatchRow | undefined> {
  const at = status === 'completed' ? { completed_at: now } : status === 'cancelled' ? { cancelled_at: now } : { expired_at: now };
  return db
    .updateTable('batches')
    .set({ status, ...at, output_file_id: outputFileId, error_file_id: errorFileId, lease_owner: null, lease_until: null })
    .where('id', '=', id)
    .where('lease_owner', '=', owner)
    .where('status', 'in', UNFINISHED_BATCH_STATUSES)
    .returningAll()
    .executeTakeFirst();
}

/** The key that created the batch, with its account's mode and suspension: what its lines authenticate as. */
export async function findBatchKey(db: Kysely<DB>, batchId: string) {
  return db
    .selectFrom('batches')
    .innerJoin('api_keys', 'api_keys.id', 'batches.key_id')
    .innerJoin('accounts', 'accounts.id', 'api_keys.account_id')
    .select([
      'api_keys.id',
      'api_keys.account_id',
      'api_keys.prefix',
      'api_keys.rpm',
      'api_keys.revoked_at',
      'api_keys.allowed_models',
      'api_keys.daily_cap_micros',
      'api_keys.monthly_cap_micros',
      'api_keys.expires_at',
      'accounts.livemode as account_livemode',
      'accounts.suspended_at as account_suspended_at',
    ])
    .where('batches.id', '=', batchId)
    .executeTakeFirst();
}

/** The account's own live file with what it is for (a batch reads only a `batch` file; its own outputs are `batch_output`). */
export async function findAccountFileWithPurpose(db: Kysely<DB>, { accountId, id, now }: { accountId: string; id: string; now: number }) {
  return db
    .selectFrom('files')
    .select(['id', 'filename', 'bytes', 'storage_path', 'created_at', 'expires_at', 'purpose'])
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .where('expires_at', '>', now)
    .executeTakeFirst();
}
