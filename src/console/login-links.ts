// One-time sign-in links to the account console, issued by the operator (admin API or CLI). The
// token rides in the URL's fragment, which browsers never send to a server or put in a Referer:
// the console page reads it and posts it to /v1/account/session. Only its hash is stored.
import { newId } from '../store/ids.js';
import { insertLoginLink } from '../store/login-links.js';
import type { Store } from '../store/open.js';
import { hashSecret, newSecret } from './secrets.js';

/** Where the console's sign-in page is, under the gateway's public address. */
export const LOGIN_PAGE_PATH = '/dashboard/login';

export interface IssuedLoginLink {
  url: string;
  expiresAt: number;
}

export async function issueLoginLink(
  store: Store,
  { accountId, publicUrl, ttlMs, now = Date.now() }: { accountId: string; publicUrl: string; ttlMs: number; now?: number },
): Promise<IssuedLoginLink> {
  const token = newSecret();
  const expiresAt = now + ttlMs;
  await insertLoginLink(store.db, {
    id: newId('link'),
    account_id: accountId,
    token_hash: hashSecret(token),
    created_at: now,
    expires_at: expiresAt,
    used_at: null,
  });
  return { url: `${publicUrl}${LOGIN_PAGE_PATH}#token=${token}`, expiresAt };
}
