import { ALLOWED, assertRpm, msUntilToken, type RateLimiter, REFILL_WINDOW_MS, type Take } from './rate-limiter.js';

interface Bucket {
  tokens: number;
  updatedAtMs: number;
  /** When refill makes this bucket full again; from then on it equals a fresh bucket and can go. */
  fullAtMs: number;
}

export interface MemoryRateLimiter extends RateLimiter {
  /** `take`, answered at once: for callers on the hot path that need no promise. */
  takeNow(key: string, rpm: number): Take;
  /** How long until `key` could take a token (0: now), taking nothing. */
  waitMs(key: string, rpm: number): number;
  /** Buckets held now; for tests of eviction. */
  bucketCount(): number;
}

/**
 * One process's buckets. Every bucket is full again at most REFILL_WINDOW_MS after its last take, so
 * a sweep per interval keeps only keys seen in the last two windows or so. The sweep runs lazily on a
 * take rather than on a timer: nothing to unref or clear, and a fake `now` drives it in tests.
 */
export function createMemoryRateLimiter(opts: { now?: () => number; sweepIntervalMs?: number } = {}): MemoryRateLimiter {
  const now = opts.now ?? Date.now;
  const sweepIntervalMs = opts.sweepIntervalMs ?? REFILL_WINDOW_MS;
  const buckets = new Map<string, Bucket>();
  let nextSweepAtMs = now() + sweepIntervalMs;

  function sweep(nowMs: number): void {
    for (const [key, bucket] of buckets) if (bucket.fullAtMs <= nowMs) buckets.delete(key);
  }

  function tokensAt(bucket: Bucket | undefined, rpm: number, nowMs: number): number {
    if (!bucket) return rpm;
    // max(0, …): a clock stepped backwards must not drain the bucket
    const elapsedMs = Math.max(0, nowMs - bucket.updatedAtMs);
    // min(rpm, …) also applies a lowered rpm at once; a raised one refills at the new rate from here
    return Math.min(rpm, bucket.tokens + (elapsedMs * rpm) / REFILL_WINDOW_MS);
  }

  function takeNow(key: string, rpm: number): Take {
    assertRpm(rpm);
    const nowMs = now();
    if (nowMs >= nextSweepAtMs) {
      sweep(nowMs);
      nextSweepAtMs = nowMs + sweepIntervalMs;
    }
    let tokens = tokensAt(buckets.get(key), rpm, nowMs);
    const allowed = tokens >= 1;
    if (allowed) tokens -= 1;
    const fullAtMs = nowMs + ((rpm - tokens) * REFILL_WINDOW_MS) / rpm;
    buckets.set(key, { tokens, updatedAtMs: nowMs, fullAtMs });
    return allowed ? ALLOWED : { allowed: false, retryAfterMs: msUntilToken(tokens, rpm) };
  }

  return {
    takeNow,
    async take(key, rpm) {
      return takeNow(key, rpm);
    },
    waitMs(key, rpm) {
      assertRpm(rpm);
      const tokens = tokensAt(buckets.get(key), rpm, now());
      return tokens >= 1 ? 0 : msUntilToken(tokens, rpm);
    },
    async close() {
      buckets.clear();
    },
    bucketCount: () => buckets.size,
  };
}
