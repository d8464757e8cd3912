// The hold and settle steps on SQLite (sqlite-steps.ts), written by the group-commit writer
// (sqlite-writer.ts).
//
// A metered call's hold is decided in memory (holdAtOnce: the balance as this connection knows it,
// known-balances.ts, less what holds not yet written keep of it) and written with its settle, as
// one step (deferred-holds.ts): a call answered in one piece writes its rows once and commits once.
// A stream's hold is made durable before its first byte (writeHold): appended to the gateway's
// settle journal, or, without one, written alone. Any hold still unwritten is written before any
// statement of Kysely's runs (a stream's progress is recorded on its hold's row), and by a timer
// once it is a few hundred ms old, so that other readers (the CLI) see it held. With the journal, a
// settle is answered once it is in the journal and written into the store later, many to a commit
// (answered-settles.ts).
import type Database from 'better-sqlite3';
import type { Kysely } from 'kysely';
import type { DB } from '../schema.js';
import { MOVE_USAGE, scheduledUsageMover, type UsageMoveSchedule } from '../usage-recent.js';
import { answeredSettles, writeJournaled } from './answered-settles.js';
import { type DeferredHold, deferredHolds } from './deferred-holds.js';
import { journaledRows } from './journaled-rows.js';
import { settleJournal } from './settle-journal.js';
import { sqliteSteps } from './sqlite-steps.js';
import { sqliteStepWriter } from './sqlite-writer.js';
import { type HoldEntry, type HotLedger, type HotLedgerLog, type SettleEntry, type SettleResult, UnwrittenHoldError } from './types.js';

export interface SqliteHotLedgerHooks {
  /** Throws the store's injected fault, if any (Store.failWrites), before a step runs and before a commit. */
  checkWritable(): void;
  /** Told of each batch's commit (the checkpointer counts them). */
  countCommit?(): void;
  /** When usage_recent is moved into usage; the default suits a busy gateway (below). */
  moveUsage?: UsageMoveSchedule;
  /** How long a hold decided in memory may stay unwritten before the timer writes it (250 ms). */
  maxUnwrittenMs?: number;
  /**
   * The file of settles answered before the store has them (answered-settles.ts); what it holds is
   * written into the store first. Without it every settle is committed before its answer.
   */
  settleJournal?: string;
  /** The longest an answered settle waits in the journal before a timer writes it (answered-settles.ts). */
  answeredSettleWriteWithinMs?: number;
}

/** A balance (undefined: no such account) that covers `needed` micros. */
const covers = (funds: number | undefined, needed: number) => funds !== undefined && funds >= needed;

export function sqliteHotLedger(db: Kysely<DB>, sqlite: Database.Database, hooks: SqliteHotLedgerHooks, log?: HotLedgerLog): HotLedger {
  const { checkWritable, countCommit = () => {}, moveUsage = MOVE_USAGE, maxUnwrittenMs = 250 } = hooks;
  const usageMover = scheduledUsageMover(sqlite, moveUsage, checkWritable, log);
  const { balance, forgetBalances, hold, holdAndSettle, holdAndSettleAnswered, holdAndRelease, settle, release } = sqliteSteps(sqlite);
  const writerHooks = { checkWritable, countCommit, afterBatch: () => usageMover.moveIfDue(), undone: forgetBalances };
  const writer = sqliteStepWriter(db, sqlite, writerHooks, log);
  const { step } = writer;
  const unwritten = deferredHolds();
  let ageTimer: NodeJS.Timeout | undefined;

  const { writeAnswered, endCutOff } = journaledRows({ holdAndSettleAnswered, holdAndRelease }, usageMover.noteSettle, log);
  const journal = hooks.settleJournal === undefined ? undefined : settleJournal(hooks.settleJournal);
  if (journal) {
    const { settles, cutOff } = writeJournaled(journal, writer.writeNow, writeAnswered, endCutOff);
    if (settles > 0) log?.warn({ settles }, 'settles answered before a restart written into the store');
    if (cutOff > 0) log?.warn({ holds: cutOff }, 'holds of streams a restart cut off, never written, ended');
  }
  const answered =
    journal &&
    answeredSettles({
      journal,
      writeNow: writer.writeNow,
      inForeignTransaction: writer.inForeignTransaction,
      write: writeAnswered,
      giveBack: (held) => unwritten.giveBack(held),
      writeJournaledHolds() {
        const holds = unwritten.takeJournaled();
        writeUnwrittenNow(holds);
        return holds.every((held) => held.returned);
      },
      holdsInFlight: writer.holdsInFlight,
      writeWithinMs: hooks.answeredSettleWriteWithinMs,
      log,
    });

  /** The balance covers the hold and what the unwritten holds reserve; the known balance may be out of date (another process's credit), so a refusal reads it afresh. */
  function covered(entry: HoldEntry): boolean {
    const needed = entry.amountMicros + unwritten.reservedFor(entry.accountId);
    return covers(balance(entry.accountId), needed) || covers(balance(entry.accountId, true), needed);
  }

  /** The hold's call will not end here: it is no longer in flight, and its end hears why. */
  function failUnwritten(held: DeferredHold, error: unknown) {
    unwritten.giveBack(held);
    unwritten.fail(held, { error, inFlight: true });
  }

  /**
   * A hold that could not be written: its end hears why (UnwrittenHoldError). A journaled one (its
   * stream may have begun) stays pending instead, to be written later or with its settle, whose
   * answer is then capped to what the balance has left (answered-settles.ts).
   */
  function notWritten(held: DeferredHold, error: unknown) {
    if (held.journaled) unwritten.putBack(held);
    else failUnwritten(held, error);
  }

  /**
   * Writes unwritten holds alone, now, in a transaction of their own committed before this returns
   * (the open step's is committed first). A hold the balance no longer covers, or any hold when the
   * store fails, is not written (notWritten).
   */
  function writeUnwrittenNow(holds: DeferredHold[]) {
    if (holds.length === 0) return;
    const written: DeferredHold[] = [];
    const uncovered: DeferredHold[] = [];
    try {
      writer.writeNow(() => {
        for (const held of holds) (hold(held.entry) ? written : uncovered).push(held);
      });
    } catch (error) {
      for (const held of holds) notWritten(held, error);
      return;
    }
    for (const held of written) unwritten.giveBack(held);
    for (const held of uncovered) notWritten(held, undefined);
  }

  /** Writes the holds older than maxUnwrittenMs (the younger ones too, past half of it), then waits for the next. */
  function writeOldHolds() {
    ageTimer = undefined;
    if (writer.inForeignTransaction()) {
      ageTimer = setTimeout(writeOldHolds, 5).unref(); // a transaction of Kysely's: after it
      return;
    }
    writeUnwrittenNow(unwritten.takeOld(performance.now() - maxUnwrittenMs / 2));
    watchAge();
  }

  function watchAge() {
    const oldest = ageTimer ? undefined : unwritten.oldest();
    if (!oldest) return;
    ageTimer = setTimeout(writeOldHolds, Math.max(1, oldest.decidedAt + maxUnwrittenMs - performance.now())).unref();
  }

  /** The hold never written and its settle, as one step; rejects with UnwrittenHoldError when it cannot be written. */
  function settleUnwritten(held: DeferredHold, entry: SettleEntry): Promise<SettleResult> {
    // Answered once it is in the journal when its charge is within the hold (so its charge is the
    // usage's: no account read), and written into the store later with many others.
    const journaled = entry.chargeMicros <= held.entry.amountMicros ? answered?.add(held, entry) : undefined;
    if (!journaled) return writeHoldAndSettle(held, entry);
    return journaled.then((landed): SettleResult | Promise<SettleResult> => {
      if (!landed) return writeHoldAndSettle(held, entry); // the journal could not take it: committed before its answer
      writer.countHold(-1);
      return { kind: 'applied', chargedMicros: entry.chargeMicros, unbilledMicros: 0 };
    });
  }

  /**
   * The hold never written and its settle, committed before the promise resolves. A journaled hold's
   * stream has gone out: a balance spent meanwhile caps its charge, and a store that refuses keeps
   * it pending for the settlements' retry.
   */
  function writeHoldAndSettle(held: DeferredHold, entry: SettleEntry): Promise<SettleResult> {
    const run = () => {
      const result = held.journaled ? holdAndSettleAnswered(held.entry, entry) : holdAndSettle(held.entry, entry);
      if (result.kind === 'applied') {
        unwritten.giveBack(held);
        usageMover.noteSettle();
      }
      return result;
    };
    return step(run, { endsHold: true }).then(
      (result) => {
        if (result.kind !== 'not-covered') return result;
        unwritten.giveBack(held);
        throw new UnwrittenHoldError(held.entry.holdId);
      },
      (error) => {
        if (held.journaled) {
          unwritten.putBack(held);
          writer.countHold(1); // still in flight: the settlements try its settle again
          throw error;
        }
        unwritten.giveBack(held);
        throw new UnwrittenHoldError(held.entry.holdId, error);
      },
    );
  }

  /** Holds being written alone (a stream's the journal could not take, before its first byte): their end waits for that write. */
  const writing = new Map<string, Promise<void>>();

  /**
   * The hold's own write, when one is on its way: its end waits for it, so as never to land in the
   * same batch (should the store refuse that batch, the end would be kept and retried for a hold
   * never written). Rejects as the write did: the call is dropped, and its end has nothing to do.
   */
  function ownWrite(holdId: string): Promise<void> | undefined {
    return writing.get(holdId)?.catch((error) => {
      endFailed(holdId);
      throw error;
    });
  }

  /** The settle of a hold not decided in memory, or written already. */
  function settleWritten(entry: SettleEntry): Promise<SettleResult> {
    const failed = endFailed(entry.holdId);
    if (failed) return Promise.reject(new UnwrittenHoldError(entry.holdId, failed.error));
    const run = () => {
      usageMover.noteSettle();
      return settle(entry);
    };
    return step(run, { endsHold: true });
  }

  /** The end of a hold whose write failed: nothing to write, and a settle hears why. */
  function endFailed(holdId: string): { error: unknown } | undefined {
    const failed = unwritten.failure(holdId);
    if (failed?.inFlight) writer.countHold(-1);
    return failed;
  }

  /** Writes a hold decided at once now, alone, in the next batch: resolves at its commit (a stream's, without the journal, or when the journal could not take it). */
  function writeHoldAlone(holdId: string): Promise<void> {
    const held = unwritten.take(holdId);
    if (!held) {
      const failed = endFailed(holdId);
      return failed ? Promise.reject(new UnwrittenHoldError(holdId, failed.error)) : Promise.resolve(); // written already
    }
    const written = (wrote: boolean) => {
      unwritten.giveBack(held);
      if (!wrote) throw new UnwrittenHoldError(holdId);
    };
    const failed = (error: unknown) => {
      unwritten.giveBack(held);
      writer.countHold(-1); // its call is dropped
      const unwrittenError = error instanceof UnwrittenHoldError ? error : new UnwrittenHoldError(holdId, error);
      unwritten.fail(held, { error: unwrittenError.cause, inFlight: false }); // an end that races the drop hears it
      throw unwrittenError;
    };
    const write = step(() => hold(held.entry), { batched: true })
      .then(written)
      .catch(failed)
      .finally(() => writing.delete(holdId));
    writing.set(holdId, write);
    return write;
  }

  return {
    hold: (entry) => step(() => hold(entry, unwritten.reservedFor(entry.accountId)), { takesHold: true }),
    holdAtOnce(entry) {
      // Inside a transaction of Kysely's, the balance read may yet be undone: the hold waits for it.
      if (writer.inForeignTransaction()) return undefined;
      checkWritable();
      if (!covered(entry)) {
        // Settles answered and not yet written reserve their holds' whole amounts: written, only their charges.
        if (!answered || answered.size === 0) return false;
        answered.writeNow();
        if (!covered(entry)) return false;
      }
      unwritten.add(entry, performance.now());
      writer.countHold(1);
      watchAge();
      return true;
    },
    writeHold(holdId) {
      const pending = unwritten.peek(holdId);
      if (pending?.journaled) return Promise.resolve();
      const journaling = pending && answered?.journalHold(pending);
      if (!journaling) return writeHoldAlone(holdId);
      // Landed and still pending: journaled (answered-settles.ts marks it). Else written alone, or
      // written or refused meanwhile (writeHoldAlone says which).
      return journaling.then((landed) => (landed && unwritten.peek(holdId) === pending ? undefined : writeHoldAlone(holdId)));
    },
    settle(entry) {
      const held = unwritten.take(entry.holdId);
      if (held) return settleUnwritten(held, entry);
      return ownWrite(entry.holdId)?.then(() => settleWritten(entry)) ?? settleWritten(entry);
    },
    release(entry) {
      const write = ownWrite(entry.holdId);
      if (write)
        return write.then(
          () => step(() => release(entry), { endsHold: true }),
          () => true,
        );
      const held = unwritten.take(entry.holdId);
      if (held) {
        // Nothing held in the store, so nothing to give back there: the rows are the call's record,
        // and a store that cannot write them loses nothing.
        unwritten.giveBack(held);
        const recorded = step(() => holdAndRelease(held.entry, entry), { endsHold: true });
        return recorded.then(
          () => true,
          () => true,
        );
      }
      if (endFailed(entry.holdId)) return Promise.resolve(true);
      return step(() => release(entry), { endsHold: true });
    },
    beforeForeignStatement() {
      // Kysely's statement sees the holds decided before it, and none of the hot steps' transaction;
      // it may move any balance.
      writer.commitOpen();
      forgetBalances();
      if (sqlite.inTransaction) return;
      if (answered && answered.size > 0) answered.writeNow();
      if (unwritten.size > 0) writeUnwrittenNow(unwritten.takeOld());
    },
    upstreamRequestSent: () => answered?.writeSoon(),
    close: () => answered?.close(),
  };
}
