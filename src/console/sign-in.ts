// Signing in to the account console: a one-time link's token, or an API key, becomes a session.
// A refusal says exactly what was wrong, so the holder knows whether to ask the operator again.
import { hashApiKey, KEY_PREFIX } from '../billing/api-keys.js';
import { isExpired, limitsOf } from '../billing/key-limits.js';
import { findAccount } from '../store/accounts.js';
import { findApiKeyByHash } from '../store/api-keys.js';
import { findLoginLinkByHash, redeemLoginLink } from '../store/login-links.js';
import type { Store } from '../store/open.js';
import { hashSecret, sameHash } from './secrets.js';
import { type NewSession, startSession } from './sessions.js';

export const SIGN_IN_REFUSED = {
  linkUnknown: 'this sign-in link is not valid; ask your operator for a new one',
  linkUsed: 'this sign-in link was already used; ask your operator for a new one',
  linkExpired: 'this sign-in link expired; ask your operator for a new one',
  keyUnknown: 'this API key is not valid; check that it was copied whole',
  keyRevoked: 'this API key was revoked; sign in with another key, or ask your operator for a sign-in link',
  keyExpired: 'this API key has expired; sign in with another key, or ask your operator for a sign-in link',
  keyTest: 'a test key cannot sign in to the console; sign in with a live key',
  suspended: 'this account is suspended by the operator; ask your operator',
} as const;

export type SignIn = { session: NewSession } | { refused: string };

interface SignInArgs {
  ttlMs: number;
  now: number;
}

export async function signInWithLoginToken(store: Store, { token, ttlMs, now }: SignInArgs & { token: string }): Promise<SignIn> {
  const tokenHash = hashSecret(token);
  // The link is used and the session made together: a failed insert leaves the link good.
  const session = await store.db.transaction().execute(async (trx) => {
    const link = await redeemLoginLink(trx, { tokenHash, now });
    if (!link) return undefined;
    // A link issued before its account was suspended is used up, and signs no one in.
    if ((await findAccount(trx, link.account_id))?.suspended_at != null) return 'suspended' as const;
    return startSession(trx, { accountId: link.account_id, linkId: link.id, ttlMs, now });
  });
  if (session === 'suspended') return { refused: SIGN_IN_REFUSED.suspended };
  if (session) return { session };
  const link = await findLoginLinkByHash(store.db, tokenHash);
  if (!link || !sameHash(link.token_hash, tokenHash)) return { refused: SIGN_IN_REFUSED.linkUnknown };
  return { refused: link.used_at !== null ? SIGN_IN_REFUSED.linkUsed : SIGN_IN_REFUSED.linkExpired };
}

export async function signInWithApiKey(store: Store, { key, ttlMs, now }: SignInArgs & { key: string }): Promise<SignIn> {
  const keyHash = hashApiKey(key);
  // Not one of ours never reaches the store.
  const row = key.startsWith(KEY_PREFIX) ? await findApiKeyByHash(store.db, keyHash) : undefined;
  if (!row || !sameHash(row.key_hash, keyHash)) return { refused: SIGN_IN_REFUSED.keyUnknown };
  if (row.revoked_at !== null) return { refused: SIGN_IN_REFUSED.keyRevoked };
  // Console sessions are live: a session knows its account, not a mode (docs/api.md "Test mode").
  if (row.account_livemode === 0) return { refused: SIGN_IN_REFUSED.keyTest };
  if (row.account_suspended_at != null) return { refused: SIGN_IN_REFUSED.suspended };
  if (isExpired(limitsOf(row), now)) return { refused: SIGN_IN_REFUSED.keyExpired };
  return { session: await startSession(store.db, { accountId: row.account_id, keyId: row.id, ttlMs, now }) };
}
