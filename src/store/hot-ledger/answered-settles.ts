// Settles answered before SQLite has them (sqlite.ts). At one connection a call's settle cost its
// answer some 160 µs of SQLite (the transaction's locks, the statement, the commit's log writes), on
// cold caches, while the gateway sits idle as the next call's upstream works. So a plain call's settle
// of a hold decided in memory is appended to the journal (settle-journal.ts, one write), answered at
// once, and written into the store in the shadow of a later call: several in one transaction, right
// after that call's upstream request goes out once a batch is queued, or by a timer, or before
// anything else reads the store (a statement of Kysely's, a close). Until then its hold keeps
// reserving its amount (deferred-holds.ts), so no decision of this process spends it twice (one
// that the reservations alone would refuse writes them first). A restart writes what the journal
// still holds before serving (docs/benchmarks-history.md).
import type { DeferredHold } from './deferred-holds.js';
import type { AnsweredSettle, SettleJournal } from './settle-journal.js';
import type { HotLedgerLog, SettleEntry } from './types.js';

/** The longest a settle waits for a later call to write it in its shadow. */
const WRITE_WITHIN_MS = 20;
/**
 * How many settles a later call's upstream request waits for before it writes them: one commit for
 * several (a transaction's begin and commit cost more than one settle's statement, on cold caches
 * at one connection), few enough to be written while that upstream works.
 */
export const SHADOW_BATCH = 8;
/** After the store refused a batch: when to try it again. */
const RETRY_MS = 1_000;

interface Queued {
  held: DeferredHold;
  record: AnsweredSettle;
}

export interface AnsweredSettlesDeps {
  journal: SettleJournal;
  /** Runs `run` in a transaction of its own, committed before it returns (the writer's writeNow). */
  writeNow(run: () => void): void;
  /** A transaction of Kysely's is open: nothing may be written now. */
  inForeignTransaction(): boolean;
  /** Writes one settle (hold and settle rows); throws when the store refuses it. */
  write(record: AnsweredSettle): void;
  /** The hold's reservation is no longer needed: its rows are in the store. */
  giveBack(held: DeferredHold): void;
  log?: HotLedgerLog;
}

export function answeredSettles(deps: AnsweredSettlesDeps) {
  const { journal, log } = deps;
  let queue: Queued[] = [];
  let soon = false;
  let timer: NodeJS.Timeout | undefined;
  let failing = false;
  let closed = false;

  function writeQueued() {
    soon = false;
    clearTimeout(timer);
    timer = undefined;
    if (queue.length === 0) return;
    if (deps.inForeignTransaction()) {
      timer = setTimeout(writeQueued, 5).unref(); // after Kysely's transaction
      return;
    }
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
      return;
    }
    failing = false;
    for (const { held } of batch) deps.giveBack(held);
    journal.written();
  }

  return {
    get size() {
      return queue.length;
    },
    /**
     * Journals the settle and queues it: true. False while the store refuses the queue (a settle is
     * then committed before its answer, and refused with it, so callers hear of the failing store),
     * or when the journal could not take it: write it as before.
     */
    add(held: DeferredHold, settle: SettleEntry): boolean {
      if (failing) return false;
      const record = { hold: held.entry, settle };
      if (!journal.append(record)) return false;
      queue.push({ held, record });
      timer ??= setTimeout(writeQueued, WRITE_WITHIN_MS).unref();
      return true;
    },
    /** After what the caller does in this turn (a call's upstream request, on its way), once a batch is queued. */
    writeSoon() {
      if (soon || queue.length < SHADOW_BATCH || failing) return;
      soon = true;
      setImmediate(writeQueued);
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

/** Writes into the store what a previous run answered and had not written (before serving); how many. */
export function writeJournaled(journal: SettleJournal, writeNow: (run: () => void) => void, write: (record: AnsweredSettle) => void): number {
  const records = journal.records();
  if (records.length === 0) return 0;
  writeNow(() => records.forEach(write));
  journal.clear();
  return records.length;
}
