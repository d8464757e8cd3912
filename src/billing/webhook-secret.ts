// Rotating an account's webhook secret, for the operator (admin API) and the account holder alike.
// The deliverer reads the secret at each attempt, so every attempt after the rotation uses the new one.
import { setWebhookSecret } from '../store/accounts.js';
import type { Store } from '../store/open.js';
import { newWebhookSecret } from './accounts.js';

/** The new secret, or undefined when there is no such account. */
export async function rotateWebhookSecret(store: Store, accountId: string): Promise<string | undefined> {
  const secret = newWebhookSecret();
  return (await setWebhookSecret(store.db, { accountId, secret })) ? secret : undefined;
}
