// The balances this connection last read or moved itself, so that deciding a hold in memory reads
// nothing from the store (sqlite.ts). A hint, never the authority: every write re-checks the balance
// in SQL (sqlite-step-triggers.ts), a hold is refused only on a balance read afresh, and a balance is
// forgotten when this connection cannot know it (a step undone, a statement of Kysely's, a write
// refused for funds) or once it is older than `maxAgeMs`, which bounds how long a change by another
// process (the CLI's credit, say) goes unseen. Reading the balance cost a read transaction of its
// own per call: two file locks taken and dropped, and the statement.

/** How long a balance read from the store is trusted, with this connection's own movements added. */
export const KNOWN_BALANCE_MAX_AGE_MS = 1_000;

interface KnownBalance {
  micros: number;
  /** performance.now() when it was read from the store. */
  readAt: number;
}

export function knownBalances(maxAgeMs = KNOWN_BALANCE_MAX_AGE_MS) {
  const known = new Map<string, KnownBalance>();
  return {
    /** The balance as read and moved since, or undefined when not known or too old. */
    get(accountId: string, now: number): number | undefined {
      const balance = known.get(accountId);
      if (!balance) return undefined;
      if (now - balance.readAt <= maxAgeMs) return balance.micros;
      known.delete(accountId);
      return undefined;
    },
    /** What the store just answered. */
    read(accountId: string, micros: number, now: number) {
      known.set(accountId, { micros, readAt: now });
    },
    /** A step of this connection's moved the balance by `delta` (nothing to do when it is not known). */
    move(accountId: string, delta: number) {
      const balance = known.get(accountId);
      if (balance) balance.micros += delta;
    },
    forget(accountId: string) {
      known.delete(accountId);
    },
    clear() {
      known.clear();
    },
  };
}
