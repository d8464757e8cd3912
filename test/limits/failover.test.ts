// The breaker around shared (Redis) limits: a failure moves decisions in process at once, with the
// same rpm; one probe at a time brings them back; one log line per transition.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createFailoverRateLimiter, type SharedLimiter } from '../../src/limits/failover.js';
import { createMemoryRateLimiter } from '../../src/limits/memory-bucket.js';
import { eventually } from '../helpers/gateway.js';

/** A shared limiter that fails until told otherwise, and counts what reached it. */
function fakeShared() {
  const state = { failing: true, takes: 0, probes: 0, probesInFlight: 0, maxProbesInFlight: 0 };
  const local = createMemoryRateLimiter();
  const shared: SharedLimiter = {
    async take(key, rpm) {
      state.takes++;
      if (state.failing) throw new Error('connect ECONNREFUSED 127.0.0.1:6379');
      return local.take(key, rpm);
    },
    async probe() {
      state.probes++;
      state.probesInFlight++;
      state.maxProbesInFlight = Math.max(state.maxProbesInFlight, state.probesInFlight);
      await new Promise((resolve) => setTimeout(resolve, 5));
      state.probesInFlight--;
      if (state.failing) throw new Error('still down');
    },
    close: async () => {},
  };
  return { shared, state };
}

function logRecorder() {
  const lines: { level: string; msg: string }[] = [];
  return {
    lines,
    log: {
      warn: (_: object, msg?: string) => void lines.push({ level: 'warn', msg: msg ?? '' }),
      info: (_: object, msg?: string) => void lines.push({ level: 'info', msg: msg ?? '' }),
    },
  };
}

test('a failing shared limiter opens the breaker at once: the same rpm is enforced in process, logged once', async () => {
  const { shared, state } = fakeShared();
  const { lines, log } = logRecorder();
  const limiter = createFailoverRateLimiter({ shared, local: createMemoryRateLimiter(), probeIntervalMs: 60_000, log });
  try {
    const takes = [];
    for (let i = 0; i < 15; i++) takes.push((await limiter.take('key-a', 5)).allowed);
    assert.deepEqual(takes, [...Array(5).fill(true), ...Array(10).fill(false)]);
    assert.equal(state.takes, 1, 'only the first take went to the failing limiter');
    assert.equal(limiter.degraded(), true);
    assert.deepEqual(
      lines.map((line) => line.level),
      ['warn'],
    );
    assert.match(lines[0]!.msg, /rate limiter degraded/);
  } finally {
    await limiter.close();
  }
});

test('while open one probe at a time tries the shared limiter, and the first success closes the breaker', async () => {
  const { shared, state } = fakeShared();
  const { lines, log } = logRecorder();
  const limiter = createFailoverRateLimiter({ shared, local: createMemoryRateLimiter(), probeIntervalMs: 20, log });
  try {
    await limiter.take('key-a', 5);
    await eventually(() => state.probes >= 3);
    assert.equal(limiter.degraded(), true);
    state.failing = false;
    await eventually(() => !limiter.degraded());
    const takesBefore = state.takes;
    assert.deepEqual(await limiter.take('key-a', 5), { allowed: true, retryAfterMs: 0 });
    assert.equal(state.takes, takesBefore + 1, 'decided by the shared limiter again');
    assert.equal(state.maxProbesInFlight, 1);
    assert.deepEqual(
      lines.map((line) => line.level),
      ['warn', 'info'],
    );
    assert.match(lines[1]!.msg, /recovered/);
  } finally {
    await limiter.close();
  }
});

test('a refused take from the shared limiter is passed on with its wait, and a bad rpm is no outage', async () => {
  const { shared, state } = fakeShared();
  state.failing = false;
  const limiter = createFailoverRateLimiter({ shared, local: createMemoryRateLimiter(), probeIntervalMs: 60_000, log: logRecorder().log });
  try {
    await limiter.take('key-a', 1);
    const refused = await limiter.take('key-a', 1);
    assert.equal(refused.allowed, false);
    assert.ok(refused.retryAfterMs > 59_000 && refused.retryAfterMs <= 60_000, String(refused.retryAfterMs));
    await assert.rejects(limiter.take('key-a', 0), RangeError);
    assert.equal(limiter.degraded(), false);
  } finally {
    await limiter.close();
  }
});
