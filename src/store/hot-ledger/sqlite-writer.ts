// The SQLite hot ledger's writer: steps (synchronous functions of prepared statements) run in
// transactions it commits, many to a commit. A caller's promise resolves only after that commit, so
// an acknowledged step is never lost to a crash of the process. A step that fails undoes its batch,
// whose steps are then written one by one, so that only it fails (cheaper than a savepoint around
// every step, since steps rarely fail).
//
// A step asked for while nothing else is pending runs at once, in a transaction that the batch of
// the same poll joins and commits. Steps that come while others are pending wait for the batch
// instead, so that under load the statements run back to back (measured: interleaved with the
// requests' own work they cost about twice as much). A step that ends the last hold in flight (one
// connection) commits at once: no other call can join its batch, so the turn it would wait costs
// its answer time and buys nothing.
//
// The connection is shared with Kysely: a batch never lands inside a transaction Kysely has open
// (while one is, the batch waits for Kysely's connection lock), and any statement of Kysely's first
// commits the transaction a step opened (`commitOpen`, from the ledger's beforeForeignStatement).
import { isDeepStrictEqual } from 'node:util';
import type Database from 'better-sqlite3';
import type { Kysely } from 'kysely';
import type { DB } from '../schema.js';
import { type Deferred, deferred } from './deferred.js';
import type { HotLedgerLog } from './types.js';

interface PendingStep {
  run(): unknown;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

export interface StepWriterHooks {
  /** Throws the store's injected fault, if any (Store.failWrites), before a step runs and before a commit. */
  checkWritable(): void;
  /** Told of each batch's commit (the checkpointer counts them). */
  countCommit(): void;
  /** Runs after each batch's commit (the usage mover). */
  afterBatch(): void;
  /** A step or a transaction was undone: what the steps remember of the store may be wrong. */
  undone(): void;
}

export interface StepWriter {
  /**
   * A step at once when nothing else is pending, else in the next batch; its promise resolves after
   * its commit. A step that ends a hold when no other is in flight commits at once. `takesHold`: a
   * hold step, counted in flight when it holds. `batched`: never at once, so that what its caller
   * does next in this turn (an upstream request) goes first.
   */
  step<T>(run: () => T, options?: { endsHold?: boolean; takesHold?: boolean; batched?: boolean }): Promise<T>;
  /**
   * Commits the open transaction, then runs `run` in a transaction of its own, committed before this
   * returns. Throws, with nothing of `run` written, when it or the commit fails.
   */
  writeNow<T>(run: () => T): T;
  /** Commits the open transaction, if any: undefined when it committed, else why it did not. */
  commitOpen(): unknown;
  /** A transaction of Kysely's is open: reads may yet be undone, and nothing of the writer's may run now. */
  inForeignTransaction(): boolean;
  /** Holds counted in flight elsewhere (decided in memory): +1 when one is taken, -1 when it ends. */
  countHold(delta: 1 | -1): void;
  /** How many holds are in flight (taken here or counted, not yet ended). */
  holdsInFlight(): number;
}

export function sqliteStepWriter(db: Kysely<DB>, sqlite: Database.Database, hooks: StepWriterHooks, log?: HotLedgerLog): StepWriter {
  const { checkWritable, countCommit, afterBatch, undone } = hooks;
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
  // SQLite ends a transaction itself on some errors (SQLITE_FULL, SQLITE_IOERR).
  const undo = () => {
    if (sqlite.inTransaction) rollback.run();
    undone();
  };

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
      undo();
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
      undo();
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
        undo();
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
        undo(); // (writeAll undoes its own: inside a transaction of Kysely's, to its savepoint)
        redoAtOnce(joined);
      } else undone();
      if (steps.length === 1) return [{ ok: false, error }];
      log?.warn({ err: error, steps: steps.length }, 'a batch of ledger steps failed; writing its steps one by one');
      return steps.map((step) => {
        try {
          checkWritable();
          return { ok: true, value: writeOne(step) }; // under a savepoint when a transaction is open
        } catch (stepError) {
          undone();
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
      afterBatch();
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

  /** Commits the open transaction, then does what follows every batch. */
  function commitAndMove() {
    commitOpen();
    afterBatch();
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
  function step<T>(run: () => T, { endsHold = false, takesHold = false, batched = false } = {}): Promise<T> {
    if (endsHold) holdsInFlight = Math.max(0, holdsInFlight - 1);
    let now: { value: T; committed: Promise<void> } | undefined;
    try {
      if (!batched) now = runAtOnce(run);
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

  function writeNow<T>(run: () => T): T {
    const openError = commitOpen();
    if (openError !== undefined) throw openError;
    const value = runFirst(run);
    try {
      checkWritable();
      commit.run();
    } catch (error) {
      undo();
      throw error;
    }
    countCommit();
    return value;
  }

  return {
    step,
    writeNow,
    commitOpen,
    inForeignTransaction: () => sqlite.inTransaction && !open,
    countHold(delta) {
      holdsInFlight = Math.max(0, holdsInFlight + delta);
    },
    holdsInFlight: () => holdsInFlight,
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
