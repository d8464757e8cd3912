// Issuing API keys: the caller sees the key once; the store keeps its hash and a display prefix.
import { createHash, randomBytes } from 'node:crypto';
import type { KeyLimitColumnValues } from '../account/key-limits-input.js';
import { type ApiKeyRow, insertApiKey } from '../store/api-keys.js';
import { newId } from '../store/ids.js';
import type { Store } from '../store/open.js';

export const KEY_PREFIX = 'tr-';
/** A test key's prefix (docs/api.md "Test mode"): served by the sandbox alone, on the test balance. */
export const TEST_KEY_PREFIX = 'tr-test-';
const SHOWN_CHARS = 6;

// sha256 without a salt is enough here: the key is 32 random bytes, not a guessable password,
// and an unsalted hash is what lets authentication find the row with one indexed lookup.
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export async function issueApiKey(
  store: Store,
  {
    accountId,
    name = null,
    rpm = null,
    limits = {},
    test = false,
    now = Date.now(),
  }: {
    accountId: string;
    name?: string | null;
    rpm?: number | null;
    limits?: KeyLimitColumnValues;
    /** A test key: the account must be a test twin (billing/test-mode.ts), whose keys are all test keys. */
    test?: boolean;
    now?: number;
  },
): Promise<{ key: string; row: ApiKeyRow }> {
  const prefix = test ? TEST_KEY_PREFIX : KEY_PREFIX;
  const key = `${prefix}${randomBytes(32).toString('base64url')}`;
  const row = await insertApiKey(store.db, {
    id: newId('key'),
    account_id: accountId,
    name,
    key_hash: hashApiKey(key),
    prefix: key.slice(0, prefix.length + SHOWN_CHARS),
    rpm,
    created_at: now,
    revoked_at: null,
    ...limits,
  });
  return { key, row };
}
