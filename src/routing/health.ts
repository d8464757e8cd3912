// What the router asks of channel health: whether a channel, or one of its keys, may take a call
// now, and what each attempt came to. The breaker (closed, open, half-open) lives behind this.

/** Why an attempt failed, as far as health is concerned. */
export type AttemptFailure =
  /** No answer: connection refused or reset, a timeout before headers, the pool full. */
  | { kind: 'unreachable' }
  /** The upstream answered 5xx (or 408). */
  | { kind: 'server_error'; status: number }
  /** The upstream refused the key (401/403). */
  | { kind: 'key_refused'; status: number }
  /** The upstream rate-limited the key (429), for `retryAfterMs` when it said. */
  | { kind: 'rate_limited'; retryAfterMs: number | undefined };

export interface RouteHealth {
  /** Whether the channel may be sent a call now (closed, or half-open with its one probe free: taken). */
  channelAvailable(channel: string, now: number): boolean;
  /** Whether the channel's key (by its fingerprint) may be sent a call now. */
  keyAvailable(channel: string, keyId: string, now: number): boolean;
  succeeded(target: { channel: string; keyId: string | null }, latencyMs: number, now: number): void;
  failed(target: { channel: string; keyId: string | null }, failure: AttemptFailure, now: number): void;
  /**
   * An attempt that was sent ended with no verdict on health: the caller left, the upstream refused
   * the caller's own input, this instance's pool was full. A half-open probe it held is free again.
   */
  released(target: { channel: string; keyId: string | null }, now: number): void;
  /**
   * Resolves when the first half-open probe out now on these channels (or their keys) comes back;
   * undefined when none is out, so there is nothing to wait for.
   */
  probeEnded(channels: string[], now: number): Promise<void> | undefined;
  /** When the soonest unavailable channel of these may be tried again (for Retry-After); undefined if none waits. */
  nextAvailableAt(channels: string[], now: number): number | undefined;
}

/** Health that takes nothing out: every channel and key always available (tests of routing alone; the gateway uses breaker.ts). */
export const alwaysAvailable: RouteHealth = {
  channelAvailable: () => true,
  keyAvailable: () => true,
  succeeded() {},
  failed() {},
  released() {},
  probeEnded: () => undefined,
  nextAvailableAt: () => undefined,
};
