/** One take's answer: whether the call may go, and when it may if not. */
export interface Take {
  allowed: boolean;
  /** 0 when allowed; otherwise how long until the bucket holds a whole token again (Retry-After). */
  retryAfterMs: number;
}

export interface RateLimiter {
  /** Takes one token from `key`'s bucket; refused when the bucket holds less than one. */
  take(key: string, rpm: number): Promise<Take>;
  /** `take` answered at once, by a limiter that decides in this process alone (no promise on the hot path). */
  takeNow?(key: string, rpm: number): Take;
  close(): Promise<void>;
}

/** A bucket holds `rpm` tokens and refills `rpm` of them, continuously, over this window. */
export const REFILL_WINDOW_MS = 60_000;

// A bucket smaller than one token could never be taken from: that is a config mistake, not a limit.
export function assertRpm(rpm: number): void {
  if (!Number.isFinite(rpm) || rpm < 1) throw new RangeError(`rpm: expected a finite number >= 1, got ${rpm}`);
}

/** How long a bucket holding `tokens` (< 1) needs to refill to one whole token. */
export function msUntilToken(tokens: number, rpm: number): number {
  return Math.max(1, Math.ceil(((1 - tokens) * REFILL_WINDOW_MS) / rpm));
}

export const ALLOWED: Take = Object.freeze({ allowed: true, retryAfterMs: 0 });
