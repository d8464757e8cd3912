// API key → caller, from memory where possible. A revoked key is forgotten at once here;
// other instances learn within the cache's short lifetime.
import { createHash, timingSafeEqual } from 'node:crypto';
import { findApiKeyByHash } from '../store/api-keys.js';
import type { Store } from '../store/open.js';
import type { Caller } from '../pipeline/types.js';

export interface KeyResolver {
  resolve(key: string): Promise<Caller | undefined>;
  forgetKey(keyId: string): void;
}

const MAX_ENTRIES = 10_000;

export function createKeyResolver(store: Store, { ttlMs = 1_000, now = Date.now }: { ttlMs?: number; now?: () => number } = {}): KeyResolver {
  const cache = new Map<string, { caller: Caller; hash: Buffer; expiresAt: number }>();
  return {
    async resolve(key) {
      const hash = createHash('sha256').update(key).digest();
      const hex = hash.toString('hex');
      const cached = cache.get(hex);
      if (cached && cached.expiresAt > now() && timingSafeEqual(cached.hash, hash)) return cached.caller;
      const row = await findApiKeyByHash(store.db, hex);
      if (!row || row.revoked_at !== null) {
        cache.delete(hex);
        return undefined;
      }
      // The row was found by its hash; comparing again in constant time keeps the check itself timing-safe.
      const stored = Buffer.from(row.key_hash, 'hex');
      if (stored.length !== hash.length || !timingSafeEqual(stored, hash)) return undefined;
      const caller: Caller = { keyId: row.id, accountId: row.account_id, rpm: row.rpm };
      if (cache.size >= MAX_ENTRIES) cache.delete(cache.keys().next().value as string);
      cache.set(hex, { caller, hash, expiresAt: now() + ttlMs });
      return caller;
    },
    forgetKey(keyId) {
      for (const [hex, entry] of cache) if (entry.caller.keyId === keyId) cache.delete(hex);
    },
  };
}
