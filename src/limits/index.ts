import { createFailoverRateLimiter, type FailoverLogger, type FailoverRateLimiter } from './failover.js';
import { createMemoryRateLimiter } from './memory-bucket.js';

export { type AuthFailureLimit, createAuthFailureLimit } from './auth-failures.js';
export { createFailoverRateLimiter, type FailoverRateLimiter } from './failover.js';
export { createMemoryRateLimiter, type MemoryRateLimiter } from './memory-bucket.js';
export type { RateLimiter, Take } from './rate-limiter.js';
export type { RedisRateLimiter, RedisRateLimiterOptions } from './redis-bucket.js';

/**
 * Redis when a URL is given, so that every gateway instance draws from one bucket per key; otherwise
 * per-process buckets, right for a single instance. With Redis, leave `now` out: Redis TIME is then
 * the one clock all instances share. While Redis fails, the same rpm is enforced per instance
 * (failover.ts), and `degraded()` says so. The Redis client is loaded only when a URL is given: it
 * takes about a tenth of a second to load.
 */
export async function createRateLimiter(opts: {
  redisUrl?: string;
  /** The longest a take waits for Redis before this instance decides alone. */
  redisTimeoutMs?: number;
  /** How often a degraded limiter tries Redis again. */
  redisProbeMs?: number;
  log?: FailoverLogger;
  now?: () => number;
}): Promise<FailoverRateLimiter> {
  const local = createMemoryRateLimiter({ now: opts.now });
  if (!opts.redisUrl) return Object.assign(local, { degraded: () => false });
  const { createRedisRateLimiter } = await import('./redis-bucket.js');
  return createFailoverRateLimiter({
    shared: createRedisRateLimiter({ redisUrl: opts.redisUrl, now: opts.now, commandTimeoutMs: opts.redisTimeoutMs }),
    local,
    probeIntervalMs: opts.redisProbeMs ?? 1_000,
    log: opts.log ?? { warn: () => {}, info: () => {} },
  });
}
