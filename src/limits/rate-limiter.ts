export interface RateLimiter {
  /** Takes one token from `key`'s bucket; false when the bucket is empty. */
  take(key: string, rpm: number): Promise<boolean>;
  close(): Promise<void>;
}

/** A bucket holds `rpm` tokens and refills `rpm` of them, continuously, over this window. */
export const REFILL_WINDOW_MS = 60_000;

// A bucket smaller than one token could never be taken from: that is a config mistake, not a limit.
export function assertRpm(rpm: number): void {
  if (!Number.isFinite(rpm) || rpm < 1) throw new RangeError(`rpm: expected a finite number >= 1, got ${rpm}`);
}
