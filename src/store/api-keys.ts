// Queries on `api_keys`. Only the hash of a key is stored; lookups go by hash.
import type { Insertable, Kysely, Selectable, Updateable } from 'kysely';
import type { ApiKeysTable, DB } from './schema.js';

export type ApiKeyRow = Selectable<ApiKeysTable>;

/** A key as its account sees it: no hash. */
export type AccountKeyRow = Omit<ApiKeyRow, 'key_hash'>;

const ACCOUNT_COLUMNS = [
  'id',
  'account_id',
  'name',
  'prefix',
  'rpm',
  'created_at',
  'revoked_at',
  'last_used_at',
  'allowed_models',
  'daily_cap_micros',
  'monthly_cap_micros',
  'expires_at',
] as const;
const COLUMNS = [...ACCOUNT_COLUMNS, 'key_hash'] as const;

export async function insertApiKey(db: Kysely<DB>, row: Insertable<ApiKeysTable>): Promise<ApiKeyRow> {
  return db.insertInto('api_keys').values(row).returning(COLUMNS).executeTakeFirstOrThrow();
}

/** A key as authentication reads it: with its account's mode (0 on a test twin), in the same lookup. */
export type ApiKeyLookupRow = ApiKeyRow & { account_livemode?: number; account_suspended_at?: number | null };

// Revoked keys are returned too: the caller decides, and can say "revoked" rather than "unknown".
export async function findApiKeyByHash(db: Kysely<DB>, keyHash: string): Promise<ApiKeyLookupRow | undefined> {
  return db
    .selectFrom('api_keys')
    .innerJoin('accounts', 'accounts.id', 'api_keys.account_id')
    .select(COLUMNS.map((column) => `api_keys.${column}` as const))
    .select(['accounts.livemode as account_livemode', 'accounts.suspended_at as account_suspended_at'])
    .where('api_keys.key_hash', '=', keyHash)
    .executeTakeFirst();
}

/** The account's keys, newest first, revoked ones included; with `keyId`, that one key if it is the account's. */
export async function listAccountKeys(db: Kysely<DB>, { accountId, keyId }: { accountId: string; keyId?: string }): Promise<AccountKeyRow[]> {
  return db
    .selectFrom('api_keys')
    .select(ACCOUNT_COLUMNS)
    .where('account_id', '=', accountId)
    .$if(keyId !== undefined, (q) => q.where('id', '=', keyId!))
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

/**
 * Sets the given columns of a key of the account (never another account's). Returns the key as it
 * is now, or undefined when the account has no such key.
 */
export async function updateApiKey(
  db: Kysely<DB>,
  { keyId, accountId, set }: { keyId: string; accountId: string; set: Updateable<ApiKeysTable> },
): Promise<AccountKeyRow | undefined> {
  return db.updateTable('api_keys').set(set).where('id', '=', keyId).where('account_id', '=', accountId).returning(ACCOUNT_COLUMNS).executeTakeFirst();
}

/**
 * The first revocation time stands; revoking again changes nothing and reports false. With
 * `accountId`, only a key of that account is revoked (another account's is left alone: false).
 */
export async function revokeApiKey(db: Kysely<DB>, { keyId, accountId, now }: { keyId: string; accountId?: string; now: number }): Promise<boolean> {
  const result = await db
    .updateTable('api_keys')
    .set({ revoked_at: now })
    .where('id', '=', keyId)
    .$if(accountId !== undefined, (q) => q.where('account_id', '=', accountId!))
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * Writes when keys were last used, one statement per key in one transaction; a time never moves
 * back (another instance may have written a later one).
 */
export async function recordKeyUses(db: Kysely<DB>, uses: ReadonlyMap<string, number>): Promise<void> {
  if (uses.size === 0) return;
  await db.transaction().execute(async (trx) => {
    for (const [keyId, at] of uses) {
      await trx
        .updateTable('api_keys')
        .set({ last_used_at: at })
        .where('id', '=', keyId)
        .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', at)]))
        .execute();
    }
  });
}
