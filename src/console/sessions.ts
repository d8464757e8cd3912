// Console sessions: made by signing in (sign-in.ts), checked on each account API request that
// comes with the cookie instead of a key, ended by signing out or by their key's revocation.
import type { Kysely } from 'kysely';
import { isExpired, limitsOf } from '../billing/key-limits.js';
import type { Caller } from '../pipeline/types.js';
import type { DB } from '../store/schema.js';
import { findSession, insertSession, type SessionWithKey } from '../store/sessions.js';
import { hashSecret, newSecret, sameHash } from './secrets.js';

export const SESSION_REFUSED = {
  unknown: 'this console session is not valid; sign in again',
  ended: 'this console session was signed out; sign in again',
  expired: 'this console session expired; sign in again',
  keyRevoked: 'the API key this console session signed in with was revoked; sign in again',
  keyExpired: 'the API key this console session signed in with has expired; sign in again',
  suspended: 'this account is suspended by the operator; ask your operator',
} as const;

/** A new session: `secret` goes in the cookie, never in the store. */
export interface NewSession {
  secret: string;
  accountId: string;
  expiresAt: number;
}

export async function startSession(
  db: Kysely<DB>,
  { accountId, linkId = null, keyId = null, ttlMs, now }: { accountId: string; linkId?: string | null; keyId?: string | null; ttlMs: number; now: number },
): Promise<NewSession> {
  const secret = newSecret();
  const expiresAt = now + ttlMs;
  await insertSession(db, {
    id: hashSecret(secret),
    account_id: accountId,
    created_at: now,
    expires_at: expiresAt,
    ended_at: null,
    link_id: linkId,
    key_id: keyId,
  });
  return { secret, accountId, expiresAt };
}

export type SessionCheck = { id: string; caller: Caller } | { refused: string; unknown: boolean };

/** The session a cookie's secret names, if it may still act; else why not. */
export async function checkSession(db: Kysely<DB>, { secret, now }: { secret: string; now: number }): Promise<SessionCheck> {
  const id = hashSecret(secret);
  const row = await findSession(db, id);
  if (!row || !sameHash(row.id, id)) return { refused: SESSION_REFUSED.unknown, unknown: true };
  if (row.account_suspended_at !== null) return { refused: SESSION_REFUSED.suspended, unknown: false };
  if (row.ended_at !== null) return { refused: SESSION_REFUSED.ended, unknown: false };
  if (row.expires_at <= now) return { refused: SESSION_REFUSED.expired, unknown: false };
  if (row.key_id !== null && row.key_revoked_at !== null) return { refused: SESSION_REFUSED.keyRevoked, unknown: false };
  const caller = sessionCaller(row);
  if (isExpired(caller.limits, now)) return { refused: SESSION_REFUSED.keyExpired, unknown: false };
  return { id: row.id, caller };
}

/**
 * Who a session acts as on the account API. Made with a key, it is that key: the key's rate limit
 * and limits (a key with either may not manage keys, signed in or not: account-keys.ts). Made with a link, it has no key: it is rate-limited on its own, as `session:…`, at the
 * gateway's default rpm, and a key it creates gets no rpm of its own (the default), like a key the
 * operator issues without one: the link is the operator's own grant to the account holder.
 */
function sessionCaller(row: SessionWithKey): Caller {
  if (row.key_id !== null) {
    const limits = limitsOf({
      allowed_models: row.key_allowed_models,
      daily_cap_micros: row.key_daily_cap_micros,
      monthly_cap_micros: row.key_monthly_cap_micros,
      expires_at: row.key_expires_at,
    });
    // Always live: a test key cannot sign in (sign-in.ts), and links are issued for live accounts.
    return { keyId: row.key_id, accountId: row.account_id, rpm: row.key_rpm, livemode: true, ...(limits && { limits }) };
  }
  // A prefix of the hash is enough to keep sessions apart, and names no row if it shows anywhere.
  return { keyId: `session:${row.id.slice(0, 16)}`, accountId: row.account_id, rpm: null, livemode: true };
}
