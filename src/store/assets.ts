// Queries on `assets`: the account's image gallery and video asset library.
import type { Insertable, Kysely, Selectable } from 'kysely';
import type { AssetsTable, DB } from './schema.js';

export type AssetRow = Selectable<AssetsTable>;

const COLUMNS = ['id', 'account_id', 'kind', 'url', 'task_id', 'source_task_id', 'created_at'] as const;

export async function insertAssets(db: Kysely<DB>, rows: Insertable<AssetsTable>[]): Promise<void> {
  if (rows.length > 0) await db.insertInto('assets').values(rows).execute();
}

export async function listAssets(
  db: Kysely<DB>,
  { accountId, kind, limit = 100 }: { accountId: string; kind?: 'image' | 'video'; limit?: number },
): Promise<AssetRow[]> {
  return db
    .selectFrom('assets')
    .select(COLUMNS)
    .where('account_id', '=', accountId)
    .$if(kind !== undefined, (q) => q.where('kind', '=', kind!))
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}
