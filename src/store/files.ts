// Queries on `files`: uploads kept under the data directory, served back by URL until they expire.
import { type Insertable, type Kysely, type Selectable, sql } from 'kysely';
import type { DB, FilesTable } from './schema.js';

/** A file as serving and the quota read it; its `purpose` is read by the Batch API alone (store/batches.ts). */
export type FileRow = Omit<Selectable<FilesTable>, 'purpose'>;

const COLUMNS = ['id', 'account_id', 'filename', 'content_type', 'bytes', 'storage_path', 'created_at', 'expires_at'] as const;

export async function insertFile(db: Kysely<DB>, row: Insertable<FilesTable>): Promise<void> {
  await db.insertInto('files').values(row).execute();
}

/** The file while it lives: an expired one the sweep has not reached yet is already gone. */
export async function findFile(db: Kysely<DB>, { id, now }: { id: string; now: number }): Promise<FileRow | undefined> {
  return db.selectFrom('files').select(COLUMNS).where('id', '=', id).where('expires_at', '>', now).executeTakeFirst();
}

/** The account's own live file; another account's is answered exactly like a missing one. */
export async function findAccountFile(db: Kysely<DB>, { accountId, id, now }: { accountId: string; id: string; now: number }): Promise<FileRow | undefined> {
  return db.selectFrom('files').select(COLUMNS).where('id', '=', id).where('account_id', '=', accountId).where('expires_at', '>', now).executeTakeFirst();
}

/** Bytes the account's live files take: what its quota counts. */
export async function accountFileBytes(db: Kysely<DB>, { accountId, now }: { accountId: string; now: number }): Promise<number> {
  // SUM of a BIGINT is NUMERIC on PostgreSQL (text to the driver): cast back to a BIGINT.
  const row = await db
    .selectFrom('files')
    .select(sql<number>`cast(coalesce(sum(bytes), 0) as bigint)`.as('bytes'))
    .where('account_id', '=', accountId)
    .where('expires_at', '>', now)
    .executeTakeFirstOrThrow();
  return Number(row.bytes);
}

/** Up to `limit` files expired at `now`, oldest first, for the sweep. */
export async function expiredFiles(db: Kysely<DB>, { now, limit }: { now: number; limit: number }): Promise<Pick<FileRow, 'id' | 'storage_path'>[]> {
  return db.selectFrom('files').select(['id', 'storage_path']).where('expires_at', '<=', now).orderBy('expires_at').limit(limit).execute();
}

export async function deleteFile(db: Kysely<DB>, id: string): Promise<boolean> {
  const result = await db.deleteFrom('files').where('id', '=', id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}
