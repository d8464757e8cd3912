// Queries on `api_keys`. Only the hash of a key is stored; lookups go by hash.
import type { Insertable, Kysely, Selectable } from 'kysely';
import type { ApiKeysTable, DB } from './schema.js';

export type ApiKeyRow = Selectable<ApiKeysTable>;

const COLUMNS = ['id', 'account_id', 'name', 'key_hash', 'prefix', 'rpm', 'created_at', 'revoked_at'] as const;

export async function insertApiKey(db: Kysely<DB>, row: Insertable<ApiKeysTable>): Promise<ApiKeyRow> {
  return db.insertInto('api_keys').values(row).returning(COLUMNS).executeTakeFirstOrThrow();
}

// Revoked keys are returned too: the caller decides, and can say "revoked" rather than "unknown".
export async function findApiKeyByHash(db: Kysely<DB>, keyHash: string): Promise<ApiKeyRow | undefined> {
  return db.selectFrom('api_keys').select(COLUMNS).where('key_hash', '=', keyHash).executeTakeFirst();
}

export async function listApiKeys(db: Kysely<DB>, accountId: string): Promise<ApiKeyRow[]> {
  return db.selectFrom('api_keys').select(COLUMNS).where('account_id', '=', accountId).orderBy('created_at', 'desc').orderBy('id').execute();
}

// The first revocation time stands; revoking again changes nothing and reports false.
export async function revokeApiKey(db: Kysely<DB>, { keyId, now }: { keyId: string; now: number }): Promise<boolean> {
  const result = await db.updateTable('api_keys').set({ revoked_at: now }).where('id', '=', keyId).where('revoked_at', 'is', null).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}
