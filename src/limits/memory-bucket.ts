import { assertRpm, REFILL_WINDOW_MS, type RateLimiter } from './rate-limiter.js';

interface Bucket {
  tokens: number;
  updatedAtMs: number;
  /** When refill makes this bucket full again; from then on it equals a fresh bucket and can go. */
  fullAtMs: number;
}

export interface MemoryRateLimiter extends RateLimiter {
  /** Buckets held now; for tests of eviction. */
  bucketCount(): number;
}

/**
 * One process's buckets. Every bucket is full again at most REFILL_WINDOW_MS after its last take, so
 * a sweep per interval keeps only keys seen in the last two windows or so. The sweep runs lazily on a
 * take rather than on a timer: nothing to unref or clear, and a fake `now` drives it in tests.
 */
export function createMemoryRateLimiter(
  opts: { now?: () => number; sweepIntervalMs?: number } = {},
): MemoryRateLimiter {
  const now = opts.now ?? Date.now;
  const sweepIntervalMs = opts.sweepIntervalMs ?? REFILL_WINDOW_MS;
  const buckets = new Map<string, Bucket>();
  let nextSweepAtMs = now() + sweepIntervalMs;

  function sweep(nowMs: number): void {
    for (const [key, bucket] of buckets) if (bucket.fullAtMs <= nowMs) buckets.delete(key);
  }

  return {
    async take(key, rpm) {
      assertRpm(rpm);
      const nowMs = now();
      if (nowMs >= nextSweepAtMs) {
        sweep(nowMs);
        nextSweepAtMs = nowMs + sweepIntervalMs;
      }
      const bucket = buckets.get(key);
      // max(0, …): a clock stepped backwards must not drain the bucket
      const elapsedMs = bucket ? Math.max(0, nowMs - bucket.updatedAtMs) : 0;
      // min(rpm, …) also applies a lowered rpm at once; a raised one refills at the new rate from here
      let tokens = bucket ? Math.min(rpm, bucket.tokens + (elapsedMs * rpm) / REFILL_WINDOW_MS) : rpm;
      const allowed = tokens >= 1;
      if (allowed) tokens -= 1;
      const fullAtMs = nowMs + ((rpm - tokens) * REFILL_WINDOW_MS) / rpm;
      buckets.set(key, { tokens, updatedAtMs: nowMs, fullAtMs });
      return allowed;
    },
    async close() {
      buckets.clear();
    },
    bucketCount: () => buckets.size,
  };
}
