import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, test } from 'node:test';
import { Redis } from 'ioredis';
import type { RateLimiter } from '../../src/limits/rate-limiter.js';
import { createRedisRateLimiter } from '../../src/limits/redis-bucket.js';
import { skipWithoutRedis, TEST_REDIS_URL } from '../helpers/redis.js';

const REDIS_URL = TEST_REDIS_URL;
const RUN_PREFIX = `tollroute-test:rl:${randomUUID()}:`;

// fails fast instead of retrying: a missing Redis must not hang the suite
const adminClient = () => new Redis(REDIS_URL, { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0, connectTimeout: 1000 });

// CI sets TOLLROUTE_REQUIRE_REDIS=1 so a missing Redis fails these tests instead of hiding them
const skip = await skipWithoutRedis('Redis rate-limit tests');

const limiters: RateLimiter[] = [];
function limiterFor(testName: string, opts: { now?: () => number } = {}): RateLimiter {
  const limiter = createRedisRateLimiter({ redisUrl: REDIS_URL, keyPrefix: `${RUN_PREFIX}${testName}:`, ...opts });
  limiters.push(limiter);
  return limiter;
}

after(async () => {
  await Promise.all(limiters.map((limiter) => limiter.close()));
  if (skip) return;
  const admin = adminClient();
  const keys = await admin.keys(`${RUN_PREFIX}*`);
  if (keys.length > 0) await admin.del(...keys);
  await admin.quit();
});

async function takeMany(limiter: RateLimiter, key: string, rpm: number, count: number): Promise<boolean[]> {
  const results: boolean[] = [];
  for (let i = 0; i < count; i++) results.push((await limiter.take(key, rpm)).allowed);
  return results;
}

test('a burst is allowed exactly rpm requests and the next is refused', { skip }, async () => {
  const limiter = limiterFor('burst');
  assert.deepEqual(await takeMany(limiter, 'key-a', 5, 6), [true, true, true, true, true, false]);
});

test('an empty bucket refills in proportion to the injected clock', { skip }, async () => {
  let nowMs = 1_000_000;
  const limiter = limiterFor('refill', { now: () => nowMs });
  await takeMany(limiter, 'key-a', 60, 60);
  nowMs += 2_999; // rpm 60: one token a second, so not yet three
  assert.deepEqual(await takeMany(limiter, 'key-a', 60, 3), [true, true, false]);
});

test('a refused take says how long until the next token, by the same clock', { skip }, async () => {
  let nowMs = 1_000_000;
  const limiter = limiterFor('wait', { now: () => nowMs });
  await takeMany(limiter, 'key-a', 6, 6); // rpm 6: one token every 10 s
  nowMs += 2_500;
  assert.deepEqual(await limiter.take('key-a', 6), { allowed: false, retryAfterMs: 7_500 });
  nowMs += 7_500;
  assert.deepEqual(await limiter.take('key-a', 6), { allowed: true, retryAfterMs: 0 });
});

test('separate keys draw from separate buckets', { skip }, async () => {
  const limiter = limiterFor('separate');
  await takeMany(limiter, 'key-a', 2, 2);
  assert.deepEqual(
    [(await limiter.take('key-a', 2)).allowed, (await limiter.take('key-b', 2)).allowed, (await limiter.take('key-b', 2)).allowed],
    [false, true, true],
  );
});

test('two gateway instances draw from one shared bucket', { skip }, async () => {
  const first = limiterFor('shared');
  const second = limiterFor('shared');
  assert.deepEqual([...(await takeMany(first, 'key-a', 4, 2)), ...(await takeMany(second, 'key-a', 4, 3))], [true, true, true, true, false]);
  assert.equal((await first.take('key-a', 4)).allowed, false);
});

test('50 parallel takes on rpm 20 from two instances allow exactly 20', { skip }, async () => {
  const instances = [limiterFor('parallel'), limiterFor('parallel')];
  const results = await Promise.all(Array.from({ length: 50 }, (_, i) => instances[i % 2]!.take('key-a', 20)));
  assert.equal(results.filter((take) => take.allowed).length, 20);
});

test('a bucket key expires about when refill would make it full', { skip }, async () => {
  const limiter = limiterFor('expiry');
  await limiter.take('key-a', 10); // one token short of full; rpm 10 refills one in 6 s
  const admin = adminClient();
  const ttlMs = await admin.pttl(`${RUN_PREFIX}expiry:key-a`);
  await admin.quit();
  assert.ok(ttlMs > 5_000 && ttlMs <= 6_000, `PTTL ${ttlMs}`);
});

// needs no Redis: port 1 refuses connections on any machine running these tests
test('a take rejects when Redis is unreachable, leaving the caller to decide', async () => {
  const limiter = createRedisRateLimiter({ redisUrl: 'redis://127.0.0.1:1', commandTimeoutMs: 500 });
  try {
    await assert.rejects(limiter.take('key-a', 5));
    await assert.rejects(limiter.take('key-a', 5)); // and keeps rejecting while it reconnects
  } finally {
    await limiter.close();
  }
});
