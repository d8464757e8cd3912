// Queries on `files`: uploads kept under the data directory and served back by URL.
import type { Insertable, Kysely, Selectable } from 'kysely';
import type { DB, FilesTable } from './schema.js';

export type FileRow = Selectable<FilesTable>;

const COLUMNS = ['id', 'account_id', 'filename', 'content_type', 'bytes', 'storage_path', 'created_at'] as const;

export async function insertFile(db: Kysely<DB>, row: Insertable<FilesTable>): Promise<void> {
  await db.insertInto('files').values(row).execute();
}

export async function findFile(db: Kysely<DB>, id: string): Promise<FileRow | undefined> {
  return db.selectFrom('files').select(COLUMNS).where('id', '=', id).executeTakeFirst();
}
