// Keys from memory: a valid key for a second, an invalid one for invalid_key_cache_ms, so a flood
// of one bad key costs one store lookup per lifetime; a key issued later works at once.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hashApiKey } from '../../src/billing/api-keys.js';
import { createKeyResolver, type KeyLookupResult } from '../../src/http/key-resolver.js';
import type { ApiKeyRow } from '../../src/store/api-keys.js';
import type { Store } from '../../src/store/open.js';

/** A key table in memory, counting lookups, and a clock the test moves. */
function setup() {
  let nowMs = 1_000_000;
  const rows = new Map<string, ApiKeyRow>();
  const lookups: string[] = [];
  const results: KeyLookupResult[] = [];
  const used: string[] = [];
  const resolver = createKeyResolver({} as Store, {
    onUse: (keyId) => void used.push(keyId),
    ttlMs: 1_000,
    invalidTtlMs: 30_000,
    now: () => nowMs,
    lookup: async (keyHash) => {
      lookups.push(keyHash);
      return rows.get(keyHash);
    },
    onLookup: (result) => void results.push(result),
  });
  const issue = (key: string, id = 'key_1') => {
    const row: ApiKeyRow = {
      id,
      account_id: 'acct_1',
      name: null,
      key_hash: hashApiKey(key),
      prefix: key.slice(0, 9),
      rpm: null,
      created_at: nowMs,
      revoked_at: null,
      last_used_at: null,
      allowed_models: null,
      daily_cap_micros: null,
      monthly_cap_micros: null,
      expires_at: null,
    };
    rows.set(row.key_hash, row);
    return row;
  };
  return { resolver, rows, lookups, results, used, issue, advance: (ms: number) => void (nowMs += ms) };
}

test('an invalid key presented again and again is looked up once per invalid_key_cache_ms', async () => {
  const { resolver, lookups, results, advance } = setup();
  for (let i = 0; i < 100; i++) assert.equal(await resolver.resolve('tr-not-a-key'), undefined);
  assert.equal(lookups.length, 1);
  advance(29_999);
  assert.equal(await resolver.resolve('tr-not-a-key'), undefined);
  assert.equal(lookups.length, 1);
  advance(1);
  assert.equal(await resolver.resolve('tr-not-a-key'), undefined);
  assert.equal(lookups.length, 2);
  assert.deepEqual(results, ['unknown', 'unknown']);
});

test('a key issued after invalid ones were refused works at once', async () => {
  const { resolver, issue, lookups } = setup();
  await resolver.resolve('tr-not-a-key');
  issue('tr-fresh-key');
  assert.deepEqual(await resolver.resolve('tr-fresh-key'), { keyId: 'key_1', accountId: 'acct_1', rpm: null, livemode: true });
  assert.equal(lookups.length, 2);
});

test('a tr-test- key is a test-mode caller, even were its account row to say live', async () => {
  const { resolver, issue } = setup();
  issue('tr-test-some-key');
  assert.equal((await resolver.resolve('tr-test-some-key'))?.livemode, false);
});

test('a revoked key is refused from memory after its lookup, and a valid key is looked up once a second', async () => {
  const { resolver, issue, lookups, results, advance } = setup();
  const row = issue('tr-valid-key');
  assert.ok(await resolver.resolve('tr-valid-key'));
  assert.ok(await resolver.resolve('tr-valid-key'));
  assert.equal(lookups.length, 1);
  advance(1_000);
  row.revoked_at = 1; // revoked by another instance: this one learns at the next lookup
  assert.equal(await resolver.resolve('tr-valid-key'), undefined);
  assert.equal(await resolver.resolve('tr-valid-key'), undefined);
  assert.equal(lookups.length, 2);
  assert.deepEqual(results, ['found', 'revoked']);
});

test('a key revoked here is refused at once, without a lookup', async () => {
  const { resolver, issue, lookups } = setup();
  issue('tr-valid-key', 'key_9');
  assert.ok(await resolver.resolve('tr-valid-key'));
  resolver.forgetKey('key_9');
  assert.equal(await resolver.resolve('tr-valid-key'), undefined);
  assert.equal(lookups.length, 1);
});

test('the invalid-key cache is bounded: a flood of distinct keys evicts the oldest', async () => {
  const { resolver, lookups } = setup();
  for (let i = 0; i < 10_001; i++) await resolver.resolve(`tr-bad-${i}`);
  assert.equal(lookups.length, 10_001);
  await resolver.resolve('tr-bad-10000'); // still remembered
  assert.equal(lookups.length, 10_001);
  await resolver.resolve('tr-bad-0'); // evicted first
  assert.equal(lookups.length, 10_002);
});

test('every authentication of a valid key is told as a use, from memory or from the store; a refused key never is', async () => {
  const { resolver, issue, used } = setup();
  issue('tr-valid-key');
  await resolver.resolve('tr-valid-key'); // looked up
  await resolver.resolve('tr-valid-key'); // from memory
  await resolver.resolve('tr-not-a-key');
  assert.deepEqual(used, ['key_1', 'key_1']);
});

test('a key memory knows is answered at once, without a promise; only the store lookup is awaited', async () => {
  const { resolver, issue, lookups, advance } = setup();
  issue('tr-good-key');
  const first = resolver.resolve('tr-good-key');
  assert.ok(first instanceof Promise, 'a key not yet in memory waits for the store');
  assert.equal((await first)?.keyId, 'key_1');
  const again = resolver.resolve('tr-good-key');
  assert.ok(!(again instanceof Promise), 'a cached key is decided at once');
  assert.equal(again?.keyId, 'key_1');
  assert.equal(await resolver.resolve('tr-not-a-key'), undefined);
  const refusedAgain = resolver.resolve('tr-not-a-key');
  assert.ok(!(refusedAgain instanceof Promise), 'a remembered refusal is decided at once');
  assert.equal(refusedAgain, undefined);
  advance(1_000);
  assert.ok(resolver.resolve('tr-good-key') instanceof Promise, 'past its lifetime in memory the key is looked up again');
  assert.equal(lookups.length, 3);
});
