// Failed authentications per client address. Past the limit an address is slowed down, never locked
// out: its unknown keys are looked up one at a time and answered 429, while a valid key from it (a
// customer behind the same NAT as a guesser) is found and admitted as from anywhere else.
import ipaddr from 'ipaddr.js';
import { createMemoryRateLimiter } from './memory-bucket.js';

export interface AuthFailureLimit {
  /** How long `address` must wait before it may try an unknown key again; 0 when it may now. */
  refusedForMs(address: string): number;
  /** Counts one failed authentication from `address`. */
  recordFailure(address: string): void;
  /**
   * Runs a store lookup of a credential presented from `address`: at once while the address is in
   * good standing, else after the address's earlier lookups, one at a time, so a guesser costs the
   * store one query at a time however fast it sends.
   */
  paceLookup<T>(address: string, lookup: () => Promise<T>): Promise<T>;
}

/**
 * A token bucket per address: `perMinute` failures in a burst, then one more each 60/perMinute s.
 * Successes cost nothing. The buckets are this instance's own: with N instances behind a balancer an
 * address gets up to N × perMinute lookups a minute, still a few against thousands a second.
 */
export function createAuthFailureLimit(opts: { perMinute: number; now?: () => number }): AuthFailureLimit {
  const buckets = createMemoryRateLimiter({ now: opts.now });
  // group → the last lookup queued for it; present only while a refused address has lookups running
  const queues = new Map<string, Promise<unknown>>();
  // asked on every failure: nothing to look at while no address has failed lately
  const refusedForMs = (address: string) => (buckets.bucketCount() === 0 ? 0 : buckets.waitMs(clientGroup(address), opts.perMinute));
  return {
    refusedForMs,
    recordFailure: (address) => void buckets.takeNow(clientGroup(address), opts.perMinute),
    paceLookup(address, lookup) {
      const group = clientGroup(address);
      const previous = queues.get(group);
      if (!previous && refusedForMs(address) === 0) return lookup();
      const run = (previous ?? Promise.resolve()).then(lookup, lookup);
      const settled = run.then(
        () => undefined,
        () => undefined,
      );
      queues.set(group, settled);
      void settled.then(() => {
        if (queues.get(group) === settled) queues.delete(group);
      });
      return run;
    },
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
