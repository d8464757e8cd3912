import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createMemoryRateLimiter } from '../../src/limits/memory-bucket.js';
import type { Take } from '../../src/limits/rate-limiter.js';

function fakeClock(startMs = 1_000_000) {
  let nowMs = startMs;
  return { now: () => nowMs, advance: (ms: number) => void (nowMs += ms) };
}

async function takeMany(take: () => Promise<Take>, count: number): Promise<boolean[]> {
  const results: boolean[] = [];
  for (let i = 0; i < count; i++) results.push((await take()).allowed);
  return results;
}

test('a burst is allowed exactly rpm requests and the next is refused', async () => {
  const limiter = createMemoryRateLimiter({ now: fakeClock().now });
  const results = await takeMany(() => limiter.take('key-a', 5), 6);
  assert.deepEqual(results, [true, true, true, true, true, false]);
});

test('an empty bucket refills in proportion to the time passed', async () => {
  const clock = fakeClock();
  const limiter = createMemoryRateLimiter({ now: clock.now });
  await takeMany(() => limiter.take('key-a', 60), 60);
  clock.advance(2_999); // rpm 60: one token a second, so not yet three
  assert.deepEqual(await takeMany(() => limiter.take('key-a', 60), 3), [true, true, false]);
  clock.advance(1); // the third token's remainder
  assert.deepEqual(await takeMany(() => limiter.take('key-a', 60), 2), [true, false]);
});

test('refill stops at rpm however long the bucket sits', async () => {
  const clock = fakeClock();
  const limiter = createMemoryRateLimiter({ now: clock.now });
  await takeMany(() => limiter.take('key-a', 3), 3);
  clock.advance(10 * 60_000);
  assert.deepEqual(await takeMany(() => limiter.take('key-a', 3), 4), [true, true, true, false]);
});

test('separate keys draw from separate buckets', async () => {
  const limiter = createMemoryRateLimiter({ now: fakeClock().now });
  await takeMany(() => limiter.take('key-a', 2), 2);
  assert.deepEqual(
    [(await limiter.take('key-a', 2)).allowed, (await limiter.take('key-b', 2)).allowed, (await limiter.take('key-b', 2)).allowed],
    [false, true, true],
  );
});

test('a lowered rpm caps the bucket at once', async () => {
  const limiter = createMemoryRateLimiter({ now: fakeClock().now });
  await limiter.take('key-a', 10); // 9 tokens left at rpm 10
  assert.deepEqual(await takeMany(() => limiter.take('key-a', 3), 4), [true, true, true, false]);
});

test('a raised rpm refills at the new rate', async () => {
  const clock = fakeClock();
  const limiter = createMemoryRateLimiter({ now: clock.now });
  await takeMany(() => limiter.take('key-a', 1), 1);
  clock.advance(1_000); // rpm 60 refills a token a second; rpm 1 would need a minute
  assert.deepEqual(await takeMany(() => limiter.take('key-a', 60), 2), [true, false]);
});

test('an rpm below one is refused as a mistake, not treated as a limit', async () => {
  const limiter = createMemoryRateLimiter({ now: fakeClock().now });
  await assert.rejects(limiter.take('key-a', 0), RangeError);
  await assert.rejects(limiter.take('key-a', Number.NaN), RangeError);
});

test('the sweep forgets buckets that are full again and keeps the rest', async () => {
  const clock = fakeClock();
  const limiter = createMemoryRateLimiter({ now: clock.now, sweepIntervalMs: 60_000 });
  await limiter.take('refilled', 60); // full again a second later
  clock.advance(30_000);
  await limiter.take('half-refilled', 1); // full again 60 s later
  clock.advance(30_000); // the sweep is due with this take
  await limiter.take('new', 60);
  assert.equal(limiter.bucketCount(), 2); // 'half-refilled' and 'new'
});

test('a refused take says how long until the next token, and waitMs says it without taking', async () => {
  const clock = fakeClock();
  const limiter = createMemoryRateLimiter({ now: clock.now });
  await takeMany(() => limiter.take('key-a', 6), 6); // rpm 6: one token every 10 s
  clock.advance(2_500);
  assert.equal(limiter.waitMs('key-a', 6), 7_500);
  assert.deepEqual(await limiter.take('key-a', 6), { allowed: false, retryAfterMs: 7_500 });
  clock.advance(7_500);
  assert.equal(limiter.waitMs('key-a', 6), 0);
  assert.deepEqual(await limiter.take('key-a', 6), { allowed: true, retryAfterMs: 0 });
});
