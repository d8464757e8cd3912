// Queries on `console_login_links`: one-time sign-in links, found by the hash of their token.
import type { Insertable, Kysely, Selectable } from 'kysely';
import type { ConsoleLoginLinksTable, DB } from './schema.js';

export type LoginLinkRow = Selectable<ConsoleLoginLinksTable>;

const COLUMNS = ['id', 'account_id', 'token_hash', 'created_at', 'expires_at', 'used_at'] as const;

export async function insertLoginLink(db: Kysely<DB>, row: Insertable<ConsoleLoginLinksTable>): Promise<LoginLinkRow> {
  return db.insertInto('console_login_links').values(row).returning(COLUMNS).executeTakeFirstOrThrow();
}

/**
 * Marks an unused, unexpired link used and returns it, in one statement: of two requests with the
 * same token, only one gets the row. Undefined when the link is unknown, used or expired.
 */
export async function redeemLoginLink(db: Kysely<DB>, { tokenHash, now }: { tokenHash: string; now: number }): Promise<LoginLinkRow | undefined> {
  return db
    .updateTable('console_login_links')
    .set({ used_at: now })
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .returning(COLUMNS)
    .executeTakeFirst();
}

// Used and expired links are returned too: the caller says which, rather than "unknown".
export async function findLoginLinkByHash(db: Kysely<DB>, tokenHash: string): Promise<LoginLinkRow | undefined> {
  return db.selectFrom('console_login_links').select(COLUMNS).where('token_hash', '=', tokenHash).executeTakeFirst();
}

/** Deletes links that expired before `before`; returns how many. */
export async function deleteExpiredLoginLinks(db: Kysely<DB>, { before }: { before: number }): Promise<number> {
  const result = await db.deleteFrom('console_login_links').where('expires_at', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** A link as the operator's list shows it: never its token's hash. */
export type LoginLinkListRow = Omit<LoginLinkRow, 'token_hash'>;

/** The account's links, newest first; expired ones stay until the sweep deletes them. */
export async function listAccountLoginLinks(db: Kysely<DB>, { accountId, limit }: { accountId: string; limit: number }): Promise<LoginLinkListRow[]> {
  return db
    .selectFrom('console_login_links')
    .select(['id', 'account_id', 'created_at', 'expires_at', 'used_at'])
    .where('account_id', '=', accountId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}
