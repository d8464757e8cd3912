// How a batch's line authenticates when the runner sends it through the gateway's own routes
// (line-call.ts): no API key, but a per-process random secret in an internal header, with the
// batch's id. It is recognised by the API-key hook (http/auth.ts) and runs as the key that
// created the batch, with that key's limits; a wrong secret is refused as an invalid key.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { TEST_KEY_PREFIX } from '../billing/api-keys.js';
import { limitsOf } from '../billing/key-limits.js';
import type { Caller } from '../pipeline/types.js';
import { findBatchKey } from '../store/batches.js';
import type { Store } from '../store/open.js';

export const BATCH_LINE_HEADER = 'x-tollroute-batch-line';

export interface BatchLineAuth {
  /** The header's value for a line of `batchId`: `<batch id>.<secret>`. */
  credential(batchId: string): string;
  /** The batch's key as a caller, or undefined for a wrong secret, an unknown batch or a revoked key. */
  resolve(credential: string): Promise<Caller | undefined>;
}

const digest = (text: string) => createHash('sha256').update(text).digest();

export function createBatchLineAuth(store: Store): BatchLineAuth {
  // Never leaves this process: kept in memory, made again at every start.
  const secret = randomBytes(32).toString('hex');
  const expected = digest(secret);
  return {
    credential: (batchId) => `${batchId}.${secret}`,
    async resolve(credential) {
      const dot = credential.lastIndexOf('.');
      if (dot <= 0) return undefined;
      // Digests compared, so the comparison takes the same time whatever was sent.
      if (!timingSafeEqual(digest(credential.slice(dot + 1)), expected)) return undefined;
      const row = await findBatchKey(store.db, credential.slice(0, dot));
      if (!row || row.revoked_at !== null) return undefined;
      const livemode = (row.account_livemode ?? 1) !== 0 && !row.prefix.startsWith(TEST_KEY_PREFIX);
      const caller: Caller = { keyId: row.id, accountId: row.account_id, rpm: row.rpm, livemode };
      const limits = limitsOf(row);
      if (limits) caller.limits = limits;
      if (row.account_suspended_at != null) caller.suspended = true;
      return caller;
    },
  };
}
