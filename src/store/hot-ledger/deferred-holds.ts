// Holds decided in memory and not yet written (sqlite.ts). A call answered in one piece usually ends
// within a millisecond or two of its hold; writing the hold then as a row of its own, and ending it
// in a second step, costs about twice the one step that writes the hold already settled
// (`npm run bench -- --ledger`). So a hold is decided from the balance read less what the holds still
// unwritten keep of it (`reserved`), and written with its settle, or alone when anything else needs
// it first: any statement of Kysely's, its age (the timer), or a stream whose settle journal cannot
// take it. A crash loses an unwritten hold with its call, before anything reached the caller:
// nothing was held and nothing is charged, as when a crash comes before a hold's commit. A stream's
// hold is in the settle journal before its first byte (`journaled`), and a restart ends it.
import type { HoldEntry } from './types.js';

export interface DeferredHold {
  entry: HoldEntry;
  /** performance.now() at the decision: the timer writes the holds older than a few hundred ms. */
  decidedAt: number;
  /** Set once what it reserved is given back (it was written, or can no longer be). */
  returned: boolean;
  /** In the settle journal (a stream's, before its first byte): a write that fails keeps it for its settle. */
  journaled: boolean;
}

interface Failure {
  /** The store's error; undefined when the balance no longer covered the hold. */
  error: unknown;
  /** Its call was still counted in flight (its end, when it comes, ends that). */
  inFlight: boolean;
}

/** Why the hold of a call that ended could not be written, kept for its end to hear; bounded, as a cache. */
const FAILED_LIMIT = 100_000;

export function deferredHolds() {
  const pending = new Map<string, DeferredHold>();
  const reserved = new Map<string, number>();
  const failed = new Map<string, Failure>();

  return {
    /** Holds decided and not written, oldest first. */
    get size() {
      return pending.size;
    },
    /** What the unwritten holds of the account keep of its balance. */
    reservedFor: (accountId: string) => reserved.get(accountId) ?? 0,

    /** Keeps the decided hold, and its amount out of what the next decisions see. */
    add(entry: HoldEntry, decidedAt: number) {
      pending.set(entry.holdId, { entry, decidedAt, returned: false, journaled: false });
      reserved.set(entry.accountId, (reserved.get(entry.accountId) ?? 0) + entry.amountMicros);
    },

    /** Takes the hold out to be written (or ended unwritten); what it reserved stays until `giveBack`. */
    take(holdId: string): DeferredHold | undefined {
      const hold = pending.get(holdId);
      if (hold) pending.delete(holdId);
      return hold;
    },

    /** The hold, left pending (undefined when it is not). */
    peek: (holdId: string): DeferredHold | undefined => pending.get(holdId),

    /** A hold taken out and not written after all (a journaled one the store refused): pending again, as if decided now (the timer tries it again later). */
    putBack(hold: DeferredHold) {
      hold.decidedAt = performance.now(); // the newest: pending stays in decision order
      pending.set(hold.entry.holdId, hold);
    },

    /** Takes out the journaled holds. */
    takeJournaled(): DeferredHold[] {
      const journaled = [...pending.values()].filter((hold) => hold.journaled);
      for (const hold of journaled) pending.delete(hold.entry.holdId);
      return journaled;
    },

    /** Takes out the holds decided at or before `decidedBy` (all of them without it). */
    takeOld(decidedBy = Number.POSITIVE_INFINITY): DeferredHold[] {
      const old: DeferredHold[] = [];
      for (const hold of pending.values()) {
        if (hold.decidedAt > decidedBy) break; // in decision order
        old.push(hold);
      }
      for (const hold of old) pending.delete(hold.entry.holdId);
      return old;
    },

    /** The oldest decision still pending, if any (when the timer should next look). */
    oldest(): DeferredHold | undefined {
      for (const hold of pending.values()) return hold;
      return undefined;
    },

    /** Gives back what the hold reserved, once: its rows now carry it, or it will never be written. */
    giveBack(hold: DeferredHold) {
      if (hold.returned) return;
      hold.returned = true;
      const left = (reserved.get(hold.entry.accountId) ?? 0) - hold.entry.amountMicros;
      if (left > 0) reserved.set(hold.entry.accountId, left);
      else reserved.delete(hold.entry.accountId);
    },

    /** The hold could not be written: its end, if one comes, hears why. */
    fail(hold: DeferredHold, failure: Failure) {
      if (failed.size >= FAILED_LIMIT) failed.clear();
      failed.set(hold.entry.holdId, failure);
    },

    /** Why the hold could not be written, once (undefined: it did not fail here). */
    failure(holdId: string): Failure | undefined {
      const failure = failed.get(holdId);
      if (failure) failed.delete(holdId);
      return failure;
    },
  };
}
