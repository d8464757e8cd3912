import { createMemoryRateLimiter } from './memory-bucket.js';
import type { RateLimiter } from './rate-limiter.js';
import { createRedisRateLimiter } from './redis-bucket.js';

export type { RateLimiter } from './rate-limiter.js';
export { createMemoryRateLimiter, type MemoryRateLimiter } from './memory-bucket.js';
export { createRedisRateLimiter, type RedisRateLimiterOptions } from './redis-bucket.js';

/**
 * Redis when a URL is given, so that every gateway instance draws from one bucket per key; otherwise
 * per-process buckets, right for a single instance. With Redis, leave `now` out: Redis TIME is then
 * the one clock all instances share, and `take` rejects while Redis is unreachable.
 */
export function createRateLimiter(opts: { redisUrl?: string; now?: () => number }): RateLimiter {
  if (opts.redisUrl) return createRedisRateLimiter({ redisUrl: opts.redisUrl, now: opts.now });
  return createMemoryRateLimiter({ now: opts.now });
}
