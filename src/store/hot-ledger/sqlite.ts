// The hold and settle steps on SQLite: prepared statements run synchronously, and every step asked
// for while the event loop polls is written in one transaction (a group commit). A caller's promise
// resolves only after that transaction has committed, so an acknowledged step is never lost to a
// crash of the process. A step that fails undoes its batch, whose steps are then written one by one,
// so that only it fails (cheaper than a savepoint around every step, since steps rarely fail).
//
// A step asked for while nothing else is pending runs at once, in a transaction that the batch of
// the same poll joins and commits. Its answer is known before that commit: holdAtOnce lets a call
// go upstream while its hold is being committed (a caller alone saves the commit's time). Steps that
// come while others are pending wait for the batch instead, so that under load the statements run
// back to back (measured: interleaved with the requests' own work they cost about twice as much).
// A hold's commit waits one more turn of the event loop when nothing joined it: its call's upstream
// request is written in the same check phase (undici writes on a reused idle connection from an
// immediate), and should go out first, so that the commit runs while the upstream works.
//
// The connection is shared with Kysely: a batch never lands inside a transaction Kysely has open
// (while one is, the batch waits for Kysely's connection lock), and any statement of Kysely's first
// commits the transaction a step opened (`beforeForeignStatement`).
import { isDeepStrictEqual } from 'node:util';
import type Database from 'better-sqlite3';
import type { Kysely } from 'kysely';
import type { DB } from '../schema.js';
import { recentUsageMover } from '../usage-recent.js';
import { sqliteSteps } from './sqlite-steps.js';
import type { HotLedger, HotLedgerLog } from './types.js';

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
}

/** A move after this many settles, or once this long has passed since the last with any settle between. */
export interface UsageMoveSchedule {
  settles: number;
  ms: number;
}

// A move takes about 4 µs a row on the event loop; every 2 s or 16 384 settles keeps a move under
// 70 ms at 20 000 settles a second and readers' scans of usage_recent short, while an account's
// page of the usage index takes a few dozen rows per move on 1 000 busy accounts (docs/benchmarks.md).
const MOVE_USAGE: UsageMoveSchedule = { settles: 16_384, ms: 2_000 };

export function sqliteHotLedger(db: Kysely<DB>, sqlite: Database.Database, hooks: SqliteHotLedgerHooks, log?: HotLedgerLog): HotLedger {
  const { checkWritable, countCommit = () => {}, moveUsage = MOVE_USAGE } = hooks;
  const { hold, settle, release } = sqliteSteps(sqlite);
  let queue: PendingStep[] = [];
  let scheduled = false;

  // Immediate: a step may read before it writes (a hold reads the balance), and a transaction that
  // takes the write lock at its first write would fail, not wait, if another process (the CLI, a
  // second instance) committed in between. Every batch writes, so the lock is taken at once.
  const writeAll = sqlite.transaction((steps: PendingStep[]) => steps.map((step) => step.run())).immediate;
  const writeOne = sqlite.transaction((step: PendingStep) => step.run()).immediate;
  const begin = sqlite.prepare('begin immediate');
  const commit = sqlite.prepare('commit');
  const rollback = sqlite.prepare('rollback');
  const moveRecentUsage = recentUsageMover(sqlite);
  let settlesSinceMove = 0;
  let lastMoveAt = Date.now();

  /** The step run at once whose transaction is still open; the next batch joins it and commits it. */
  let open: AtOnceStep | undefined;

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
      step.committed.reject(error);
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

  /**
   * Runs a step now, in a transaction of its own that the next batch joins and commits, and returns
   * its answer with that commit; undefined when other steps are pending (it should join their batch)
   * or a transaction of Kysely's is open. Throws what the step threw, with nothing written.
   */
  function runAtOnce<T>(run: () => T, { yieldsOnce = false } = {}): { value: T; committed: Promise<void> } | undefined {
    if (open || queue.length > 0 || sqlite.inTransaction) return undefined;
    const value = runFirst(run);
    open = { run, value, committed: deferred(), yieldsOnce };
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
      step.committed.reject(error);
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
    if (open?.yieldsOnce && queue.length === 0) {
      open.yieldsOnce = false;
      setImmediate(flush); // still scheduled: steps asked for meanwhile join this flush
      return;
    }
    scheduled = false;
    const steps = queue;
    queue = [];
    countCommit();
    if (steps.length === 0) {
      commitOpen();
      return moveUsageIfDue();
    }
    const writeBatch = () => {
      const outcomes = writeSteps(steps);
      const commitError = commitOpen(); // the open transaction, which the steps joined (if none, they committed already)
      steps.forEach((step, i) => {
        const outcome = outcomes[i]!;
        if (!outcome.ok) step.reject(outcome.error);
        else if (commitError !== undefined) step.reject(commitError);
        else step.resolve(outcome.value);
      });
      moveUsageIfDue();
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

  /** Moves usage_recent into usage when the schedule says; a move that fails leaves the rows for the next (readers read both). */
  function moveUsageIfDue() {
    if (settlesSinceMove === 0 || (settlesSinceMove < moveUsage.settles && Date.now() - lastMoveAt < moveUsage.ms)) return;
    if (sqlite.inTransaction) return; // a transaction of Kysely's: the move must not become part of it
    settlesSinceMove = 0;
    lastMoveAt = Date.now();
    try {
      checkWritable();
      moveRecentUsage();
    } catch (error) {
      settlesSinceMove = 1; // try again at the next schedule
      log?.warn({ err: error }, 'moving usage rows from usage_recent failed; they stay there, readable, until the next move');
    }
  }

  function schedule() {
    if (scheduled) return;
    scheduled = true;
    // After the event loop's poll phase: the steps of every request read in it share one commit.
    setImmediate(flush);
  }

  /** A step at once when nothing else is pending, else in the next batch; its promise resolves after its commit. */
  function step<T>(run: () => T): Promise<T> {
    let now: { value: T; committed: Promise<void> } | undefined;
    try {
      now = runAtOnce(run);
    } catch (error) {
      return Promise.reject(error);
    }
    if (now) return now.committed.then(() => now.value);
    return new Promise<T>((resolve, reject) => {
      queue.push({ run, resolve: resolve as (value: unknown) => void, reject });
      schedule();
    });
  }

  return {
    hold: (entry) => step(() => hold(entry)),
    holdAtOnce(entry) {
      const now = runAtOnce(() => hold(entry), { yieldsOnce: true });
      return now && { held: now.value, committed: now.committed };
    },
    settle: (entry) =>
      step(() => {
        settlesSinceMove += 1;
        return settle(entry);
      }),
    release: (entry) => step(() => release(entry)),
    beforeForeignStatement: () => void commitOpen(),
  };
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

interface AtOnceStep {
  run(): unknown;
  /** Its answer, which its caller may have had before the commit. */
  value: unknown;
  /** A hold whose call goes upstream meanwhile: its commit waits one turn, unless a batch joins it first. */
  yieldsOnce: boolean;
  committed: Deferred;
}

interface Deferred {
  promise: Promise<void>;
  resolve(): void;
  reject(error: unknown): void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // A commit that fails is reported to each step's caller; with none waiting, it is not unhandled.
  promise.catch(() => {});
  return { promise, resolve, reject };
}
