// Rate limits when Redis fails, with a real client: a Redis that is not there, and one that stops
// answering (a proxy that holds its bytes; the shared Redis server itself is never paused).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { createRateLimiter } from '../../src/limits/index.js';
import { eventually } from '../helpers/gateway.js';
import { skipWithoutRedis, TEST_REDIS_URL } from '../helpers/redis.js';
import { startTcpProxy } from '../helpers/tcp-proxy.js';

const REDIS_URL = TEST_REDIS_URL;

function logRecorder() {
  const lines: string[] = [];
  return {
    lines,
    log: { warn: (_: object, msg?: string) => void lines.push(`warn ${msg}`), info: (_: object, msg?: string) => void lines.push(`info ${msg}`) },
  };
}

/** Takes one at a time, timing each. */
async function timedTakes(limiter: { take(key: string, rpm: number): Promise<{ allowed: boolean }> }, key: string, rpm: number, count: number) {
  const allowed: boolean[] = [];
  const ms: number[] = [];
  for (let i = 0; i < count; i++) {
    const startedAt = performance.now();
    allowed.push((await limiter.take(key, rpm)).allowed);
    ms.push(performance.now() - startedAt);
  }
  return { allowed, ms };
}

// port 1 refuses connections on any machine running these tests
test('with Redis on a closed port, rpm 5 still admits 5 of 15, no take waits for a timeout, logged once', async () => {
  const { lines, log } = logRecorder();
  const limiter = await createRateLimiter({ redisUrl: 'redis://127.0.0.1:1', redisTimeoutMs: 200, redisProbeMs: 100, log });
  try {
    const { allowed, ms } = await timedTakes(limiter, 'key-a', 5, 15);
    assert.equal(allowed.filter(Boolean).length, 5);
    assert.deepEqual(allowed.slice(0, 5), [true, true, true, true, true]);
    assert.equal(limiter.degraded(), true);
    // the first take learns of the failure (refused at once here); the rest never ask Redis
    assert.ok(ms[0]! < 400, `first take ${ms[0]} ms`);
    // none waited for Redis (its timeout is 200 ms); the margin is for a busy machine, not for Redis
    assert.ok(Math.max(...ms.slice(1)) < 150, `later takes up to ${Math.max(...ms.slice(1))} ms`);
    await new Promise((resolve) => setTimeout(resolve, 350)); // a few probes fail meanwhile
    assert.deepEqual(lines.filter((line) => line.startsWith('warn')).length, 1);
  } finally {
    await limiter.close();
  }
});

const skip = await skipWithoutRedis('a Redis that stops answering');

describe('a Redis that stops answering', { skip }, () => {
  test('trips the breaker within the timeout, limits per instance while frozen, and recovers when it answers', async () => {
    const proxy = await startTcpProxy({ host: '127.0.0.1', port: 6379 });
    const { lines, log } = logRecorder();
    const limiter = await createRateLimiter({ redisUrl: `redis://127.0.0.1:${proxy.port}`, redisTimeoutMs: 200, redisProbeMs: 100, log });
    const admin = new Redis(REDIS_URL);
    const key = `failover-${randomUUID()}`;
    try {
      // the first take also connects and loads the script: on a busy machine that may outlast 200 ms
      // and open the breaker, so warm up until a take is decided by Redis
      await eventually(async () => (await limiter.take(`${key}-warm-up`, 1_000)) && !limiter.degraded(), 5_000);
      const warnings = lines.length;
      assert.deepEqual((await timedTakes(limiter, key, 3, 1)).allowed, [true]);
      assert.equal(await admin.exists(`tollroute:rl:${key}`), 1, 'the bucket lives in Redis while it answers');
      assert.equal(limiter.degraded(), false);

      proxy.freeze();
      const frozen = await timedTakes(limiter, key, 3, 6);
      // the first take waits out the 200 ms timeout; the local bucket starts full, so 3 of the 5 after it pass
      assert.ok(frozen.ms[0]! >= 150 && frozen.ms[0]! < 1_000, `first frozen take ${frozen.ms[0]} ms`);
      assert.ok(Math.max(...frozen.ms.slice(1)) < 150, `later takes up to ${Math.max(...frozen.ms.slice(1))} ms`);
      assert.deepEqual(frozen.allowed, [true, true, true, false, false, false]);
      assert.equal(limiter.degraded(), true);

      proxy.thaw();
      await eventually(() => !limiter.degraded(), 5_000);
      // back on Redis: its bucket decides again. It gave one token before the freeze, and the take that
      // timed out ran when the held bytes arrived (a timed-out command may still run: never resent)
      assert.deepEqual((await timedTakes(limiter, key, 3, 2)).allowed, [true, false]);
      assert.deepEqual(
        lines.slice(warnings).map((line) => line.split(':')[0]),
        ['warn rate limiter degraded', 'info rate limiter recovered'],
      );
    } finally {
      await limiter.close();
      await admin.del(`tollroute:rl:${key}`, `tollroute:rl:${key}-warm-up`);
      admin.disconnect();
      await proxy.close();
    }
  });
});
