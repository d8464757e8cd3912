// Shared limits through Redis with a circuit breaker: while Redis fails, each instance enforces the
// same rpm from its own buckets (never no limit at all), and comes back to Redis by itself.
import type { RateLimiter, Take } from './rate-limiter.js';

export interface SharedLimiter extends RateLimiter {
  /** Resolves once the shared store answers again. */
  probe(): Promise<void>;
}

export interface FailoverLogger {
  warn(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
}

export interface FailoverRateLimiter extends RateLimiter {
  /** True while the shared limiter is failing and this instance decides alone. */
  degraded(): boolean;
}

/**
 * Closed: every take goes to `shared`. The first take that fails (error or timeout) opens the
 * breaker: that take and every one after it are decided by `local` at once, so no caller waits for
 * a dead Redis again. While open, one probe every `probeIntervalMs` tries `shared`; the first that
 * succeeds closes the breaker. One log line per transition, never one per request.
 *
 * Open, a key's limit applies per instance: N instances let through up to N × rpm. Local buckets
 * are not copied into Redis on recovery, so a key may get one extra burst as limits move back.
 */
export function createFailoverRateLimiter(opts: {
  shared: SharedLimiter;
  local: RateLimiter;
  probeIntervalMs: number;
  log: FailoverLogger;
}): FailoverRateLimiter {
  const { shared, local, log } = opts;
  let open = false;
  let closing = false;
  let probeTimer: NodeJS.Timeout | undefined;

  function trip(error: unknown) {
    if (open || closing) return;
    open = true;
    log.warn({ err: error }, 'rate limiter degraded: Redis failed; each instance now enforces limits alone until it answers');
    scheduleProbe();
  }

  function scheduleProbe() {
    // unref: a pending probe must not keep a process alive that has nothing else to do
    probeTimer = setTimeout(probe, opts.probeIntervalMs).unref();
  }

  function probe() {
    probeTimer = undefined;
    shared.probe().then(
      () => {
        if (closing) return;
        open = false;
        log.info({}, 'rate limiter recovered: limits are shared through Redis again');
      },
      () => {
        if (!closing) scheduleProbe();
      },
    );
  }

  return {
    async take(key, rpm): Promise<Take> {
      if (open) return local.take(key, rpm);
      try {
        return await shared.take(key, rpm);
      } catch (error) {
        // a limit this instance enforces alone beats none: the caller is decided here, not admitted blind
        if (error instanceof RangeError) throw error; // a bad rpm is a config mistake, not an outage
        trip(error);
        return local.take(key, rpm);
      }
    },
    degraded: () => open,
    async close() {
      closing = true;
      clearTimeout(probeTimer);
      await Promise.all([shared.close(), local.close()]);
    },
  };
}
