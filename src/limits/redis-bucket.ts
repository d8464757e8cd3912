import { Redis } from 'ioredis';
import { ALLOWED, assertRpm, type RateLimiter, REFILL_WINDOW_MS } from './rate-limiter.js';

// Read, refill, take and write in one script, so that concurrent takes from any number of gateway
// instances are serialised by Redis and a bucket never hands out more than it holds.
// KEYS[1] the bucket; ARGV[1] rpm; ARGV[2] the refill window in ms; ARGV[3] now in ms, or '' for TIME.
// Returns {1, 0} when a token was taken, else {0, ms until the bucket holds a whole token again}.
// The clock is Redis's own TIME: instances share one bucket, so they must share one clock, and a host
// whose clock runs ahead would otherwise refill everyone's buckets early. ARGV[3] exists for tests.
const TAKE_SCRIPT = `
if redis.replicate_commands then redis.replicate_commands() end -- TIME before a write, on Redis < 5
local rpm = tonumber(ARGV[1])
local windowMs = tonumber(ARGV[2])
local now
if ARGV[3] == '' then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
else
  now = tonumber(ARGV[3])
end
local tokens = rpm
local state = redis.call('HMGET', KEYS[1], 'tokens', 'updatedAtMs')
if state[1] and state[2] then
  local elapsed = math.max(0, now - tonumber(state[2]))
  tokens = math.min(rpm, tonumber(state[1]) + elapsed * rpm / windowMs)
end
local allowed = 0
local waitMs = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
else
  waitMs = math.max(1, math.ceil((1 - tokens) * windowMs / rpm))
end
redis.call('HSET', KEYS[1], 'tokens', string.format('%.17g', tokens), 'updatedAtMs', string.format('%.17g', now))
-- once full again the bucket equals a missing one, so it may expire then
redis.call('PEXPIRE', KEYS[1], math.max(1, math.ceil((rpm - tokens) * windowMs / rpm)))
return {allowed, waitMs}
`;

// The probe's own bucket: so large it never refuses, so a probe tests the real path (the script, a
// write) without touching any caller's bucket. A PING would pass where a write pause stops scripts.
const PROBE_KEY = '__probe__';
const PROBE_RPM = 1_000_000_000;

type ScriptedRedis = Redis & {
  tollrouteTakeToken(key: string, rpm: number, windowMs: number, nowMs: string): Promise<[number, number]>;
};

export interface RedisRateLimiter extends RateLimiter {
  /** Resolves when Redis runs a take again (on a bucket of its own); rejects as a take would. */
  probe(): Promise<void>;
}

export interface RedisRateLimiterOptions {
  redisUrl: string;
  /** Tests only: replaces Redis TIME, so refill can be driven by a fake clock. */
  now?: () => number;
  /** Prepended to every key; tests give each run its own. */
  keyPrefix?: string;
  /** The longest a take waits, connecting included, before it rejects (default 200 ms). */
  commandTimeoutMs?: number;
  /** Connection errors; every take that they affect also rejects with them. */
  onError?: (error: Error) => void;
}

/**
 * Buckets shared by every gateway instance pointing at one Redis.
 *
 * Connects at once, and loads the script on every connect, so the first caller does not pay for
 * either. When Redis is unreachable, `take` rejects (within about `commandTimeoutMs`) rather than
 * guessing an answer: the failover limiter (failover.ts) then decides in process, so keep the timeout
 * short: a take that waits for it delays a caller. The offline queue stays on so that a reconnect
 * shorter than the timeout is invisible (ioredis times queued commands too); `maxRetriesPerRequest: 0`
 * rejects queued takes at the first failed attempt instead of holding requests through many reconnects.
 */
export function createRedisRateLimiter(opts: RedisRateLimiterOptions): RedisRateLimiter {
  const keyPrefix = opts.keyPrefix ?? 'tollroute:rl:';
  const timeoutMs = opts.commandTimeoutMs ?? 200;
  const redis = new Redis(opts.redisUrl, {
    lazyConnect: true,
    enableOfflineQueue: true,
    maxRetriesPerRequest: 0,
    commandTimeout: timeoutMs,
    // longer than a take may wait: a connect cut at 200 ms on a busy host would never succeed, and
    // takes meanwhile are bounded by commandTimeout anyway
    connectTimeout: Math.max(timeoutMs, 2_000),
    // a take whose reply was lost may have run; sending it again could take a second token
    autoResendUnfulfilledCommands: false,
    retryStrategy: (attempt) => Math.min(attempt * 50, 1000),
  }) as ScriptedRedis;
  // without a listener ioredis prints every failed reconnect; the takes carry the error anyway
  redis.on('error', opts.onError ?? (() => {}));
  // defineCommand sends EVALSHA and falls back to EVAL once per connection when Redis lacks the script
  redis.defineCommand('tollrouteTakeToken', { numberOfKeys: 1, lua: TAKE_SCRIPT });
  // loaded ahead, so that no caller's take pays the NOSCRIPT round trip (a new or restarted Redis)
  redis.on('ready', () => void redis.script('LOAD', TAKE_SCRIPT).catch(() => {}));
  redis.connect().catch(() => {}); // a failure shows in the first take, and ioredis keeps retrying

  return {
    async take(key, rpm) {
      assertRpm(rpm);
      const nowMs = opts.now ? String(opts.now()) : '';
      const [allowed, waitMs] = await redis.tollrouteTakeToken(keyPrefix + key, rpm, REFILL_WINDOW_MS, nowMs);
      return allowed === 1 ? ALLOWED : { allowed: false, retryAfterMs: waitMs };
    },
    async probe() {
      await redis.tollrouteTakeToken(keyPrefix + PROBE_KEY, PROBE_RPM, REFILL_WINDOW_MS, '');
    },
    async close() {
      // quit lets takes in flight finish; with no connection there is nothing to wait for
      if (redis.status === 'ready') await redis.quit();
      else redis.disconnect();
    },
  };
}
