// Queries on `console_sessions`: the account console's signed-in sessions, by the hash of the
// cookie's secret.
import type { Insertable, Kysely, Selectable } from 'kysely';
import type { ConsoleSessionsTable, DB } from './schema.js';

export type SessionRow = Selectable<ConsoleSessionsTable>;

/** A session with what its key says now: a session made with a key lasts only while the key does. */
export type SessionWithKey = SessionRow & {
  account_suspended_at: number | null;
  key_revoked_at: number | null;
  key_rpm: number | null;
  key_allowed_models: string | null;
  key_daily_cap_micros: number | null;
  key_monthly_cap_micros: number | null;
  key_expires_at: number | null;
};

export async function insertSession(db: Kysely<DB>, row: Insertable<ConsoleSessionsTable>): Promise<void> {
  await db.insertInto('console_sessions').values(row).execute();
}

/** The session, ended and expired ones included (the caller says which), with its key's state. */
export async function findSession(db: Kysely<DB>, id: string): Promise<SessionWithKey | undefined> {
  return db
    .selectFrom('console_sessions as s')
    .innerJoin('accounts as a', 'a.id', 's.account_id')
    .leftJoin('api_keys as k', 'k.id', 's.key_id')
    .select([
      's.id',
      's.account_id',
      's.created_at',
      's.expires_at',
      's.ended_at',
      's.link_id',
      's.key_id',
      'a.suspended_at as account_suspended_at',
      'k.revoked_at as key_revoked_at',
      'k.rpm as key_rpm',
      'k.allowed_models as key_allowed_models',
      'k.daily_cap_micros as key_daily_cap_micros',
      'k.monthly_cap_micros as key_monthly_cap_micros',
      'k.expires_at as key_expires_at',
    ])
    .where('s.id', '=', id)
    .executeTakeFirst();
}

/** Signs the session out; the first end time stands. False when it was already ended or is unknown. */
export async function endSession(db: Kysely<DB>, { id, now }: { id: string; now: number }): Promise<boolean> {
  const result = await db.updateTable('console_sessions').set({ ended_at: now }).where('id', '=', id).where('ended_at', 'is', null).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Ends every session of the accounts still running (the operator's doing); returns how many. */
export async function endAccountSessions(db: Kysely<DB>, { accountIds, now }: { accountIds: string[]; now: number }): Promise<number> {
  if (accountIds.length === 0) return 0;
  const result = await db
    .updateTable('console_sessions')
    .set({ ended_at: now })
    .where('account_id', 'in', accountIds)
    .where('ended_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Deletes sessions that expired before `before`; returns how many. */
export async function deleteExpiredSessions(db: Kysely<DB>, { before }: { before: number }): Promise<number> {
  const result = await db.deleteFrom('console_sessions').where('expires_at', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}
