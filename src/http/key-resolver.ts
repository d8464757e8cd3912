// API key → caller, from memory where possible. A revoked key is forgotten at once here;
// other instances learn within the cache's short lifetime.
import { hash as digest, timingSafeEqual } from 'node:crypto';
import { TEST_KEY_PREFIX } from '../billing/api-keys.js';
import { limitsOf } from '../billing/key-limits.js';
import type { AuthFailureLimit } from '../limits/auth-failures.js';
import type { Caller } from '../pipeline/types.js';
import { type ApiKeyLookupRow, findApiKeyByHash } from '../store/api-keys.js';
import type { Store } from '../store/open.js';

export interface KeyResolver {
  /**
   * The key's caller, or undefined when the key is not valid. Answered at once (no promise) when
   * memory decides, which is nearly every request; a promise only when the store is asked.
   * `address`, the client's, paces the store lookup when that address keeps failing.
   */
  resolve(key: string, address?: string): Caller | undefined | Promise<Caller | undefined>;
  forgetKey(keyId: string): void;
  /** Drops a key from memory, so its next request reads its limits afresh (after they changed). */
  refreshKey(keyId: string): void;
  /** Drops every key of the accounts from memory, so their next request reads the account's state (a suspension) afresh. */
  refreshAccounts(accountIds: readonly string[]): void;
  /** Failed authentications per client address; absent when not limited. */
  failures?: AuthFailureLimit;
  /** A batch line's internal credential (batches/line-auth.ts) → the batch's key as a caller; set by the gateway. */
  batchLine?: (credential: string) => Promise<Caller | undefined>;
}

/** What one store lookup found: counted, so an operator sees how often keys reach the database. */
export type KeyLookupResult = 'found' | 'unknown' | 'revoked';

export interface KeyResolverOptions {
  /** How long a valid key is served from memory (revocation elsewhere shows within this). */
  ttlMs?: number;
  /**
   * How long an unknown or revoked key is answered 401 from memory. Issuing a key needs no
   * invalidation: a new key is 32 random bytes, so no one can have presented it before it existed.
   */
  invalidTtlMs?: number;
  failures?: AuthFailureLimit;
  onLookup?: (result: KeyLookupResult) => void;
  /** Told of every key that authenticated a request (key-use.ts notes when it was last used). */
  onUse?: (keyId: string) => void;
  /** The store lookup by key hash; tests count calls through it. */
  lookup?: (keyHash: string) => Promise<ApiKeyLookupRow | undefined>;
  now?: () => number;
}

// Both caches are bounded: a flood of distinct invalid keys evicts the oldest entries, never grows memory.
const MAX_ENTRIES = 10_000;
const MAX_INVALID_ENTRIES = 10_000;

export function createKeyResolver(store: Store, opts: KeyResolverOptions = {}): KeyResolver {
  const { ttlMs = 1_000, invalidTtlMs = 30_000, now = Date.now, onLookup, onUse } = opts;
  const lookup = opts.lookup ?? ((keyHash: string) => findApiKeyByHash(store.db, keyHash));
  const cache = new Map<string, { caller: Caller; hash: Buffer; expiresAt: number }>();
  // hash (hex) → when the refusal may be forgotten; a hex hash reveals nothing of the key presented
  const invalid = new Map<string, number>();

  function rememberInvalid(hex: string) {
    invalid.delete(hex); // re-inserted last, so eviction stays oldest-first
    if (invalid.size >= MAX_INVALID_ENTRIES) invalid.delete(invalid.keys().next().value as string);
    invalid.set(hex, now() + invalidTtlMs);
  }

  /** Asks the store for a key memory could not decide, and remembers the answer. */
  async function lookUp(hash: Buffer, hex: string, address: string | undefined): Promise<Caller | undefined> {
    // Looked up even from an address past its failure limit: only the store can tell a customer's
    // key behind a guesser's NAT from a guess, and the guesser's lookups wait their turn.
    const row = await (address !== undefined && opts.failures ? opts.failures.paceLookup(address, () => lookup(hex)) : lookup(hex));
    if (!row || row.revoked_at !== null) {
      onLookup?.(row ? 'revoked' : 'unknown');
      cache.delete(hex);
      rememberInvalid(hex);
      return undefined;
    }
    onLookup?.('found');
    // The row was found by its hash; comparing again in constant time keeps the check itself timing-safe.
    const stored = Buffer.from(row.key_hash, 'hex');
    if (stored.length !== hash.length || !timingSafeEqual(stored, hash)) return undefined;
    // Test mode if either says so: the account (a test twin) or the key's own tr-test- prefix. They
    // agree by construction; were they ever not to, the call stays on the sandbox, never the reverse.
    const livemode = (row.account_livemode ?? 1) !== 0 && !row.prefix.startsWith(TEST_KEY_PREFIX);
    const caller: Caller = { keyId: row.id, accountId: row.account_id, rpm: row.rpm, livemode };
    const limits = limitsOf(row);
    if (limits) caller.limits = limits; // absent, not undefined, keeps an unlimited key's caller small
    if (row.account_suspended_at != null) caller.suspended = true;
    if (cache.size >= MAX_ENTRIES) cache.delete(cache.keys().next().value as string);
    cache.set(hex, { caller, hash, expiresAt: now() + ttlMs });
    onUse?.(caller.keyId);
    return caller;
  }

  return {
    failures: opts.failures,
    resolve(key, address) {
      // One-shot hash, as hex: no Hash object per request, and on Node 20 a Buffer answer costs more
      // than the hash (measured: 0.7 µs as hex, 1.7 as a Buffer, 2.6 through createHash).
      const hex = digest('sha256', key, 'hex');
      const hash = Buffer.from(hex, 'hex');
      const cached = cache.get(hex);
      if (cached && cached.expiresAt > now() && timingSafeEqual(cached.hash, hash)) {
        onUse?.(cached.caller.keyId);
        return cached.caller;
      }
      const refusedUntil = invalid.get(hex);
      if (refusedUntil !== undefined) {
        if (refusedUntil > now()) return undefined;
        invalid.delete(hex);
      }
      return lookUp(hash, hex, address);
    },
    refreshKey(keyId) {
      for (const [hex, entry] of cache) if (entry.caller.keyId === keyId) cache.delete(hex);
    },
    refreshAccounts(accountIds) {
      for (const [hex, entry] of cache) if (accountIds.includes(entry.caller.accountId)) cache.delete(hex);
    },
    forgetKey(keyId) {
      for (const [hex, entry] of cache) {
        if (entry.caller.keyId !== keyId) continue;
        cache.delete(hex);
        // a revoked key is refused from memory from now on, without a lookup
        rememberInvalid(hex);
      }
    },
  };
}
