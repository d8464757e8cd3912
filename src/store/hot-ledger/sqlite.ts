// The hold and settle steps on SQLite: prepared statements run synchronously, and every step asked
// for while the event loop polls is written in one transaction (a group commit). A caller's promise
// resolves only after that transaction has committed, so an acknowledged step is never lost to a
// crash of the process. A step that fails undoes its batch, whose steps are then written one by one,
// so that only it fails (cheaper than a savepoint around every step, since steps rarely fail).
//
// A step asked for while nothing else is pending runs at once, in a transaction that the batch of
// the same poll joins and commits. Steps that come while others are pending wait for the batch
// instead, so that under load the statements run back to back (measured: interleaved with the
// requests' own work they cost about twice as much). A settle or release that ends the last hold in
// flight (one connection) commits at once: no other call can join its batch, so the turn it would
// wait costs its answer time and buys nothing.
//
// A metered call's hold is decided in memory (holdAtOnce: the balance read, less what holds not yet
// written keep of it) and written with its settle, as one step (deferred-holds.ts): a call answered
// in one piece writes its rows once and commits once. A stream's hold is written before its first
// byte (writeHold); any hold still unwritten is written before any statement of Kysely's runs, and
// by a timer once it is a few tens of ms old, so that other readers see it held.
//
// The connection is shared with Kysely: a batch never lands inside a transaction Kysely has open
// (while one is, the batch waits for Kysely's connection lock), and any statement of Kysely's first
// commits the transaction a step opened (`beforeForeignStatement`).
import { isDeepStrictEqual } from 'node:util';
import type Database from 'better-sqlite3';
import type { Kysely } from 'kysely';
import type { DB } from '../schema.js';
import { MOVE_USAGE, scheduledUsageMover, type UsageMoveSchedule } from '../usage-recent.js';
import { type Deferred, deferred } from './deferred.js';
import { type DeferredHold, deferredHolds } from './deferred-holds.js';
import { sqliteSteps } from './sqlite-steps.js';
import { type HotLedger, type HotLedgerLog, type SettleEntry, type SettleResult, UnwrittenHoldError } from './types.js';

interface PendingStep {
  run(): unknown;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

export interface SqliteHotLedgerHooks {
  /** Throws the store's injected fault, if any (Store.failWrites), before a step runs and before a commit. */
  checkWritable(): void;
  /** Told of each batch's commit (the checkpointer counts them). */
  countCommit?(): void;
  /** When usage_recent is moved into usage; the default suits a busy gateway (below). */
  moveUsage?: UsageMoveSchedule;
  /** How long a hold decided in memory may stay unwritten before the timer writes it (50 ms). */
  maxUnwrittenMs?: number;
}

export function sqliteHotLedger(db: Kysely<DB>, sqlite: Database.Database, hooks: SqliteHotLedgerHooks, log?: HotLedgerLog): HotLedger {
  const { checkWritable, countCommit = () => {}, moveUsage = MOVE_USAGE, maxUnwrittenMs = 50 } = hooks;
  const usageMover = scheduledUsageMover(sqlite, moveUsage, checkWritable, log);
  const { balance, hold, holdAndSettle, settle, release } = sqliteSteps(sqlite);
  const unwritten = deferredHolds();
  let ageTimer: NodeJS.Timeout | undefined;
  let queue: PendingStep[] = [];
  let scheduled = false;

  // Immediate: a step may read before it writes (a settle, its hold or the account's funds), and a
  // transaction that takes the write lock at its first write would fail, not wait, if another
  // process (the CLI, a second instance) committed in between. Every batch writes, so the lock is
  // taken at once.
  const writeAll = sqlite.transaction((steps: PendingStep[]) => steps.map((step) => step.run())).immediate;
  const writeOne = sqlite.transaction((step: PendingStep) => step.run()).immediate;
  const begin = sqlite.prepare('begin immediate');
  const commit = sqlite.prepare('commit');
  const rollback = sqlite.prepare('rollback');

  /** The step run at once whose transaction is still open: the next batch joins it and commits it. */
  let open: AtOnceStep | undefined;
  /**
   * Holds taken here and not yet ended here. An estimate (holds taken by the transaction step and
   * ended here are not counted): it only decides whether a lone settle waits for company.
   */
  let holdsInFlight = 0;

  /** The open step's commit failed, so nothing of it was written: a hold it took is not in flight. */
  function failOpen(step: AtOnceStep, error: unknown) {
    if (step.takesHold) holdsInFlight = Math.max(0, holdsInFlight - 1);
    step.committed.reject(error);
  }

  /** Commits the open transaction, if any: undefined when it committed, else why it did not (nothing of it was written). */
  function commitOpen(): unknown {
    const step = open;
    if (!step) return undefined;
    open = undefined;
    try {
      checkWritable(); // a store that stopped taking writes since its steps ran (Store.failWrites)
      commit.run();
      step.committed.resolve();
      return undefined;
    } catch (error) {
      if (sqlite.inTransaction) rollback.run(); // SQLite ends it itself on some errors (SQLITE_FULL, SQLITE_IOERR)
      failOpen(step, error);
      return error;
    }
  }

  /** Begins a transaction and runs the step in it; throws what it threw, with the transaction undone. */
  function runFirst<T>(run: () => T): T {
    checkWritable();
    begin.run();
    try {
      return run();
    } catch (error) {
      if (sqlite.inTransaction) rollback.run();
      throw error;
    }
  }

  /** Nothing pending, no transaction open: a step may run (or a hold be decided) at once. */
  const aloneNow = () => !open && queue.length === 0 && !sqlite.inTransaction;

  /**
   * Runs a step now, in a transaction of its own that the next batch joins and commits, and returns
   * its answer with that commit; undefined when other steps are pending (it should join their batch)
   * or a transaction of Kysely's is open. Throws what the step threw, with nothing written.
   */
  function runAtOnce<T>(run: () => T): { value: T; committed: Promise<void> } | undefined {
    if (!aloneNow()) return undefined;
    const value = runFirst(run);
    open = { run, value, committed: deferred(), takesHold: false };
    schedule();
    return { value, committed: open.committed.promise };
  }

  /**
   * After a failed batch undid the transaction of the step run at once: that step again, first, as
   * it ran then (the same statements on the same rows, so the same answer, which is checked: its
   * answer may have gone out already). If it cannot be written as it was, it fails.
   */
  function redoAtOnce(step: AtOnceStep) {
    try {
      const again = runFirst(step.run);
      if (!isDeepStrictEqual(again, step.value)) {
        rollback.run();
        throw new Error('a ledger step answered differently when written again after a failure in its batch');
      }
      open = step;
    } catch (error) {
      failOpen(step, error);
    }
  }

  /**
   * Each step's outcome: the batch in one go, inside the open transaction when there is one; when a
   * step fails, the batch is undone (with the open transaction, whose step is then redone first) and
   * each step written alone, so that only the one at fault fails.
   */
  function writeSteps(steps: PendingStep[]): Outcome[] {
    const joined = open;
    try {
      checkWritable();
      // No savepoint around a joined batch: it costs more than the rare replay below.
      return (joined ? steps.map((step) => step.run()) : writeAll(steps)).map((value) => ({ ok: true, value }));
    } catch (error) {
      if (joined) {
        open = undefined;
        if (sqlite.inTransaction) rollback.run();
        redoAtOnce(joined);
      }
      if (steps.length === 1) return [{ ok: false, error }];
      log?.warn({ err: error, steps: steps.length }, 'a batch of ledger steps failed; writing its steps one by one');
      return steps.map((step) => {
        try {
          checkWritable();
          return { ok: true, value: writeOne(step) }; // under a savepoint when a transaction is open
        } catch (stepError) {
          return { ok: false, error: stepError };
        }
      });
    }
  }

  async function flush() {
    scheduled = false;
    const steps = queue;
    queue = [];
    countCommit();
    const writeBatch = () => {
      if (steps.length === 0) return commitAndMove();
      const outcomes = writeSteps(steps);
      const commitError = commitOpen(); // the open transaction, which the steps joined (if none, they committed already)
      steps.forEach((step, i) => {
        const outcome = outcomes[i]!;
        if (!outcome.ok) step.reject(outcome.error);
        else if (commitError !== undefined) step.reject(commitError);
        else step.resolve(outcome.value);
      });
      usageMover.moveIfDue();
    };
    const failBatch = (error: unknown) => {
      commitOpen();
      for (const step of steps) step.reject(error); // nothing was written (a settled promise ignores this)
    };
    // Kysely's lock matters only while a transaction of Kysely's is open. With none open (or only the
    // one a step run at once began), the batch runs to its commit without yielding, so nothing of
    // Kysely's can land inside it, and taking the lock would only cost a Kysely instance and a few
    // turns of promises per batch.
    if (open || !sqlite.inTransaction) {
      try {
        writeBatch();
      } catch (error) {
        failBatch(error);
      }
      return;
    }
    await db
      .connection()
      .execute(async () => writeBatch())
      .catch(failBatch);
  }

  /** Commits the open transaction, then moves usage rows when due, as after every batch. */
  function commitAndMove() {
    commitOpen();
    usageMover.moveIfDue();
  }

  /** A hold taken here: in flight until a settle or release here, or until its commit fails (run at once). */
  function tookHold(atOnce: AtOnceStep | undefined) {
    holdsInFlight += 1;
    if (atOnce) atOnce.takesHold = true;
  }

  function schedule() {
    if (scheduled) return;
    scheduled = true;
    // After the event loop's poll phase: the steps of every request read in it share one commit.
    setImmediate(flush);
  }

  /**
   * A step at once when nothing else is pending, else in the next batch; its promise resolves after
   * its commit. A step that ends a hold when no other is in flight commits at once. `takesHold`: a
   * hold step, counted in flight when it holds.
   */
  function step<T>(run: () => T, { endsHold = false, takesHold = false } = {}): Promise<T> {
    if (endsHold) holdsInFlight = Math.max(0, holdsInFlight - 1);
    let now: { value: T; committed: Promise<void> } | undefined;
    try {
      now = runAtOnce(run);
    } catch (error) {
      return Promise.reject(error);
    }
    if (now) {
      if (takesHold && now.value === true) tookHold(open);
      else if (endsHold && holdsInFlight === 0) commitAndMove();
      return now.committed.then(() => now.value);
    }
    return new Promise<T>((resolve, reject) => {
      const resolveStep = (value: unknown) => {
        if (takesHold && value === true) tookHold(undefined);
        resolve(value as T);
      };
      queue.push({ run, resolve: resolveStep, reject });
      schedule();
    });
  }

  /** The hold's call will not end here: it is no longer in flight, and its end hears why. */
  function failUnwritten(held: DeferredHold, error: unknown) {
    unwritten.giveBack(held);
    unwritten.fail(held, { error, inFlight: true });
  }

  /**
   * Writes unwritten holds alone, now, in a transaction of their own committed before this returns
   * (the open step's is committed first). A hold the balance no longer covers, or any hold when the
   * store fails, is not written: its end hears why (UnwrittenHoldError).
   */
  function writeUnwrittenNow(holds: DeferredHold[]) {
    if (holds.length === 0) return;
    commitOpen();
    const written: DeferredHold[] = [];
    try {
      runFirst(() => {
        for (const held of holds) {
          if (hold(held.entry)) written.push(held);
          else failUnwritten(held, undefined);
        }
      });
      checkWritable();
      commit.run();
      countCommit();
      for (const held of written) unwritten.giveBack(held);
    } catch (error) {
      if (sqlite.inTransaction) rollback.run();
      for (const held of holds) if (!held.returned) failUnwritten(held, error); // (those not covered are already)
    }
  }

  /** Writes the holds older than maxUnwrittenMs (the younger ones too, past half of it), then waits for the next. */
  function writeOldHolds() {
    ageTimer = undefined;
    if (sqlite.inTransaction && !open) {
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
    const run = () => {
      const result = holdAndSettle(held.entry, entry);
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
        unwritten.giveBack(held);
        throw new UnwrittenHoldError(held.entry.holdId, error);
      },
    );
  }

  /** The end of a hold whose write failed: nothing to write, and a settle hears why. */
  function endFailed(holdId: string): { error: unknown } | undefined {
    const failed = unwritten.failure(holdId);
    if (failed?.inFlight) holdsInFlight = Math.max(0, holdsInFlight - 1);
    return failed;
  }

  return {
    hold: (entry) => step(() => hold(entry, unwritten.reservedFor(entry.accountId)), { takesHold: true }),
    holdAtOnce(entry) {
      // Inside a transaction of Kysely's, the balance read may yet be undone: the hold waits for it.
      if (sqlite.inTransaction && !open) return undefined;
      checkWritable();
      const funds = balance(entry.accountId);
      if (funds === undefined || funds - unwritten.reservedFor(entry.accountId) < entry.amountMicros) return { held: false };
      unwritten.add(entry, performance.now());
      holdsInFlight += 1;
      watchAge();
      return { held: true, deferred: true };
    },
    writeHold(holdId) {
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
        holdsInFlight = Math.max(0, holdsInFlight - 1); // its call is dropped
        const unwrittenError = error instanceof UnwrittenHoldError ? error : new UnwrittenHoldError(holdId, error);
        unwritten.fail(held, { error: unwrittenError.cause, inFlight: false }); // an end that races the drop hears it
        throw unwrittenError;
      };
      return step(() => hold(held.entry)).then(written).catch(failed);
    },
    settle(entry) {
      const held = unwritten.take(entry.holdId);
      if (held) return settleUnwritten(held, entry);
      const failed = endFailed(entry.holdId);
      if (failed) return Promise.reject(new UnwrittenHoldError(entry.holdId, failed.error));
      const run = () => {
        usageMover.noteSettle();
        return settle(entry);
      };
      return step(run, { endsHold: true });
    },
    release(entry) {
      const held = unwritten.take(entry.holdId);
      if (held) {
        // Never written: nothing to give back in the store.
        unwritten.giveBack(held);
        holdsInFlight = Math.max(0, holdsInFlight - 1);
        return Promise.resolve(true);
      }
      if (endFailed(entry.holdId)) return Promise.resolve(true);
      return step(() => release(entry), { endsHold: true });
    },
    beforeForeignStatement() {
      // Kysely's statement sees the holds decided before it, and none of the hot steps' transaction.
      commitOpen();
      if (unwritten.size > 0 && !sqlite.inTransaction) writeUnwrittenNow(unwritten.takeOld());
    },
  };
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

interface AtOnceStep {
  run(): unknown;
  /** Its answer, which its caller may have had before the commit. */
  value: unknown;
  /** A hold decided at once: counted in flight until it ends, or until its commit fails. */
  takesHold: boolean;
  committed: Deferred;
}
