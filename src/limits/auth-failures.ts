// Failed authentications per client address: past the limit an address is refused (429) before its
// key is looked up, so a flood of invalid keys from one client never reaches the database.
import ipaddr from 'ipaddr.js';
import { createMemoryRateLimiter } from './memory-bucket.js';

export interface AuthFailureLimit {
  /** How long `address` must wait before it may try a key again; 0 when it may now. */
  refusedForMs(address: string): number;
  /** Counts one failed authentication from `address`. */
  recordFailure(address: string): void;
}

/**
 * A token bucket per address: `perMinute` failures in a burst, then one more each 60/perMinute s.
 * Successes cost nothing. The buckets are this instance's own: with N instances behind a balancer an
 * address gets up to N × perMinute lookups a minute, still a few against thousands a second.
 */
export function createAuthFailureLimit(opts: { perMinute: number; now?: () => number }): AuthFailureLimit {
  const buckets = createMemoryRateLimiter({ now: opts.now });
  return {
    // asked on every request: nothing to look at while no address has failed lately
    refusedForMs: (address) => (buckets.bucketCount() === 0 ? 0 : buckets.waitMs(clientGroup(address), opts.perMinute)),
    recordFailure: (address) => void buckets.takeNow(clientGroup(address), opts.perMinute),
  };
}

/**
 * The unit one client is counted by: an IPv4 address, or an IPv6 /64 (one host usually holds a whole
 * /64 and can pick any address in it, so counting single IPv6 addresses would limit nothing).
 */
export function clientGroup(address: string): string {
  if (!address.includes(':') || !ipaddr.isValid(address)) return address; // IPv4 as it is, unparsed
  const parsed = ipaddr.process(address); // ::ffff:1.2.3.4 counts as 1.2.3.4
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const parts = (parsed as ipaddr.IPv6).parts.slice(0, 4).map((part) => part.toString(16));
  return `${parts.join(':')}::/64`;
}
