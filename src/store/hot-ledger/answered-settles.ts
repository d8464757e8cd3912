// Settles answered before SQLite has them (sqlite.ts). A call's settle of a hold decided in memory,
// when its charge is within the hold, is appended to the journal (settle-journal.ts: one write for
// the settles of an event-loop turn), answered, and written into the store later, many to a
// transaction: at one connection in the shadow of a later call (right after its upstream request
// goes out, once a few are queued), under load once a bulk is queued or by a timer, and always
// before anything else reads the store (a statement of Kysely's, a close). A transaction's begin and
// commit, and the log pages it writes, cost more than a settle's statement; under load each
// turn's few settles paid them. Until a settle is in the store its
// hold keeps reserving its amount (deferred-holds.ts), so no decision of this process spends it
// twice (one that the reservations alone would refuse writes them first). A restart writes what
// the journal still holds before serving. A stream's hold is journaled the same way before its first
// byte (journalHold), and written with its settle.
import type { DeferredHold } from './deferred-holds.js';
import type { AnsweredSettle, JournalRecord, SettleJournal } from './settle-journal.js';
import type { HoldEntry, HotLedgerLog, SettleEntry } from './types.js';

/** The longest an answered settle waits to be written into the store. */
const WRITE_WITHIN_MS = 20;
/**
 * How many settles a lone call's upstream request waits for before it writes them: one commit for
 * several, few enough to be written while that upstream works. A commit writes about ten pages of
 * the log however few settles it holds: 32 a commit take a lone call 0.93x the CPU of 8 (docs/performance.md).
 */
export const SHADOW_BATCH = 32;
/** Under load, how many settles are written at once without waiting for the timer: enough to share a commit, few enough not to stall the event loop (about 20 µs each). */
export const BULK_BATCH = 256;
/** After the store refused a batch: when to try it again. */
const RETRY_MS = 1_000;

interface Queued {
  held: DeferredHold;
  record: AnsweredSettle;
}

/** A record waiting for the journal's write of its turn (a settle, or a stream's hold), and its caller told whether it landed. */
interface Waiting {
  held: DeferredHold;
  record: JournalRecord;
  journaled(landed: boolean): void;
}

export interface AnsweredSettlesDeps {
  journal: SettleJournal;
  /** Runs `run` in a transaction of its own, committed before it returns (the writer's writeNow). */
  writeNow(run: () => void): void;
  /** A transaction of Kysely's is open: nothing may be written now. */
  inForeignTransaction(): boolean;
  /** Writes one settle (hold and settle rows); throws when the store refuses it. */
  write(record: AnsweredSettle): void;
  /**
   * Writes into the store the holds journaled without their settle that are still unwritten (streams
   * under way), before the journal is emptied: true when the store has them all.
   */
  writeJournaledHolds(): boolean;
  /** The hold's reservation is no longer needed: its rows are in the store. */
  giveBack(held: DeferredHold): void;
  /** How many calls hold funds now (a lone call writes the queue in its upstream's shadow). */
  holdsInFlight(): number;
  /** The longest an answered settle waits to be written into the store (WRITE_WITHIN_MS). */
  writeWithinMs?: number;
  log?: HotLedgerLog;
}

export function answeredSettles(deps: AnsweredSettlesDeps) {
  const { journal, log, writeWithinMs = WRITE_WITHIN_MS } = deps;
  /** Records of this turn, before the journal's write. */
  let waiting: Waiting[] = [];
  /** Settles in the journal, not yet in the store. */
  let queue: Queued[] = [];
  let soon = false;
  let timer: NodeJS.Timeout | undefined;
  let failing = false;
  let closed = false;

  /** Appends this turn's records to the journal in one write and answers them: settles queued when they landed. */
  function journalWaiting() {
    const batch = waiting;
    waiting = [];
    if (batch.length === 0) return;
    const landed = journal.appendAll(batch.map((w) => w.record));
    for (const { held, record, journaled } of batch) {
      if (landed && record.settle) queue.push({ held, record: record as AnsweredSettle });
      // Marked now, not when its caller hears: a write of the queue later in this turn may empty the file.
      else if (landed) held.journaled = true;
      journaled(landed);
    }
    if (!landed) return;
    if (queue.length >= BULK_BATCH || journal.full) writeAfterThisTurn();
    else if (queue.length > 0) timer ??= setTimeout(writeQueued, writeWithinMs).unref();
  }

  function writeAfterThisTurn() {
    if (soon) return;
    soon = true;
    setImmediate(writeQueued);
  }

  function writeQueued() {
    journalWaiting();
    soon = false;
    clearTimeout(timer);
    timer = undefined;
    if (queue.length === 0 && !journal.full) return;
    if (deps.inForeignTransaction()) {
      timer = setTimeout(writeQueued, 5).unref(); // after Kysely's transaction
      return;
    }
    if (queue.length > 0 && !writeBatch()) return;
    // Emptied only once the store has all that the file holds, streams' holds journaled alone included.
    if (journal.full && deps.writeJournaledHolds()) journal.written();
  }

  /** Writes the queue into the store in one transaction: false when the store refused it (kept, retried). */
  function writeBatch(): boolean {
    const batch = queue;
    queue = [];
    try {
      deps.writeNow(() => {
        for (const { record } of batch) deps.write(record);
      });
    } catch (error) {
      // Nothing of the batch was written; the journal still holds it all. Tried again, in order.
      queue = batch.concat(queue);
      if (!failing) log?.warn({ err: error, settles: queue.length }, 'answered settles could not be written into the store; retrying');
      failing = true;
      timer = setTimeout(writeQueued, RETRY_MS).unref();
      return false;
    }
    failing = false;
    for (const { held } of batch) deps.giveBack(held);
    return true;
  }

  /** Queues `record` for this turn's write to the journal: resolves true once it is in the file. */
  function journalAtTurnEnd(held: DeferredHold, record: JournalRecord): Promise<boolean> | undefined {
    if (failing || closed) return undefined;
    return new Promise((journaled) => {
      waiting.push({ held, record, journaled });
      if (waiting.length === 1) setImmediate(journalWaiting);
    });
  }

  return {
    get size() {
      return waiting.length + queue.length;
    },
    /**
     * Journals the settle with the others of this turn: true once it is in the journal, and its answer
     * may go out; false when the journal could not take it. Undefined (nothing taken) while the store
     * refuses the queue: a settle is then committed before its answer, and refused with it, so
     * callers hear of the failing store.
     */
    add: (held: DeferredHold, settle: SettleEntry) => journalAtTurnEnd(held, { hold: held.entry, settle }),
    /**
     * Journals a stream's hold with the records of this turn, so that it need not be written alone
     * before the stream's first byte: true once it is in the journal; false or undefined as `add`.
     */
    journalHold: (held: DeferredHold) => journalAtTurnEnd(held, { hold: held.entry }),
    /** After what the caller does in this turn (a lone call's upstream request, on its way), once a few are queued. */
    writeSoon() {
      if (queue.length < SHADOW_BATCH || failing || deps.holdsInFlight() > 1) return;
      writeAfterThisTurn();
    },
    /** Now: something else is about to read the store, or it closes. */
    writeNow: writeQueued,
    close() {
      if (closed) return;
      closed = true;
      writeQueued();
      clearTimeout(timer);
      journal.close();
    },
  };
}

/**
 * Writes into the store what a previous run answered and had not written (before serving), and ends
 * the holds of its streams that a crash cut off before their settle (`endCutOff`, for those the
 * store does not have): how many settles and holds.
 */
export function writeJournaled(
  journal: SettleJournal,
  writeNow: (run: () => void) => void,
  write: (record: AnsweredSettle) => void,
  endCutOff: (hold: HoldEntry) => void,
): { settles: number; cutOff: number } {
  const records = journal.records();
  if (records.length === 0) return { settles: 0, cutOff: 0 };
  const settled = new Set(records.filter((record) => record.settle).map((record) => record.hold.holdId));
  const settles = records.filter((record): record is AnsweredSettle => record.settle !== undefined);
  const cutOff = records.filter((record) => !record.settle && !settled.has(record.hold.holdId)).map((record) => record.hold);
  writeNow(() => {
    settles.forEach(write);
    cutOff.forEach(endCutOff);
  });
  journal.clear();
  return { settles: settles.length, cutOff: cutOff.length };
}
