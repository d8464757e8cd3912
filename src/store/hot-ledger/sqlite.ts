// The hold and settle steps on SQLite: prepared statements run synchronously. A step runs the
// moment it is asked for, inside a transaction that stays open until the event loop's poll phase is
// over and then commits once for every step run in it (a group commit). Each step runs under its own
// savepoint, so one that fails is undone alone. Its answer is known at once (a hold's decision lets
// the call go upstream while the commit is still to come: holdAtOnce), but a caller's promise
// resolves only after the commit, so an acknowledged step is never lost to a crash of the process.
//
// The connection is shared with Kysely. Before any statement of Kysely's, the open transaction is
// committed (`beforeForeignStatement`); while a transaction of Kysely's is open, steps wait in a
// queue and are written after it, inside Kysely's connection lock, as one transaction.
import type Database from 'better-sqlite3';
import type { Kysely } from 'kysely';
import { capCharge } from '../../billing/charge-cap.js';
import type { DB } from '../schema.js';
import type { HoldEntry, HotLedger, HotLedgerLog, SettleEntry, SettleResult } from './types.js';

interface ClosedHold {
  account_id: string;
  amount_micros: number;
  key_id: string | null;
  request_id: string | null;
  model: string;
  endpoint: string;
  client_request_id: string | null;
}

interface PendingStep {
  run(): unknown;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

// Positional parameters: binding by name looks each one up on an object, a measurable part of a step.
function statements(sqlite: Database.Database) {
  return {
    /** amount, amount, account, amount */
    moveToHeld: sqlite.prepare('update accounts set balance_micros = balance_micros - ?, held_micros = held_micros + ? where id = ? and balance_micros >= ?'),
    /** id, account, key, amount, request, model, endpoint, now, instance, client request */
    insertHold: sqlite.prepare(
      `insert into holds (id, account_id, key_id, amount_micros, state, request_id, model, endpoint, task_id, charged_micros, created_at, ended_at, instance_id, progress, client_request_id)
       values (?, ?, ?, ?, 'open', ?, ?, ?, null, null, ?, null, ?, null, ?)`,
    ),
    /** account, kind, balance delta, held delta, hold, request, model, note, now */
    insertLedger: sqlite.prepare(
      `insert into ledger (account_id, kind, balance_delta_micros, held_delta_micros, hold_id, request_id, model, note, created_at)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    /** state, charged, now, id */
    closeHold: sqlite.prepare(
      `update holds set state = ?, charged_micros = ?, ended_at = ? where id = ? and state = 'open' and cap_periods is null
       returning account_id, amount_micros, key_id, request_id, model, endpoint, client_request_id`,
    ),
    /** charged, id */
    setCharged: sqlite.prepare('update holds set charged_micros = ? where id = ?'),
    accountFunds: sqlite.prepare('select balance_micros, overdraft_micros from accounts where id = ?'),
    /** balance delta, held delta, account */
    adjustAccount: sqlite.prepare('update accounts set balance_micros = balance_micros + ?, held_micros = held_micros + ? where id = ?'),
    /** id, account, key, hold, request, model, endpoint, units, amount, now, unbilled, flags, client request, upstream ms, channel, attempts */
    insertUsage: sqlite.prepare(
      `insert into usage (id, account_id, key_id, hold_id, request_id, model, endpoint, units, amount_micros, created_at, unbilled_micros, flags, client_request_id, upstream_ms, channel, attempts)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
  };
}

/**
 * `checkWritable` throws the store's injected fault, if any (Store.failWrites), before a step runs.
 * The steps share the one connection with Kysely: a batch runs inside Kysely's connection lock, so
 * it never lands inside a transaction Kysely has open.
 */
export function sqliteHotLedger(db: Kysely<DB>, sqlite: Database.Database, checkWritable: () => void, log?: HotLedgerLog): HotLedger {
  const sql = statements(sqlite);
  let queue: PendingStep[] = [];
  let scheduled = false;

  function hold(e: HoldEntry): boolean {
    if (sql.moveToHeld.run(e.amountMicros, e.amountMicros, e.accountId, e.amountMicros).changes === 0) return false;
    sql.insertHold.run(e.holdId, e.accountId, e.keyId, e.amountMicros, e.requestId, e.model, e.endpoint, e.now, e.instanceId, e.clientRequestId);
    sql.insertLedger.run(e.accountId, 'hold', -e.amountMicros, e.amountMicros, e.holdId, e.requestId, e.model, null, e.now);
    return true;
  }

  function settle(e: SettleEntry): SettleResult {
    const closed = sql.closeHold.get('settled', e.chargeMicros, e.now, e.holdId) as ClosedHold | undefined;
    if (!closed) return { kind: 'not-open' };
    let funds = { balance_micros: 0, overdraft_micros: 0 };
    if (e.chargeMicros > closed.amount_micros) funds = sql.accountFunds.get(closed.account_id) as typeof funds;
    const { chargedMicros, unbilledMicros } = capCharge({
      chargeMicros: e.chargeMicros,
      heldMicros: closed.amount_micros,
      balanceMicros: funds.balance_micros,
      overdraftMicros: funds.overdraft_micros,
    });
    if (chargedMicros !== e.chargeMicros) sql.setCharged.run(chargedMicros, e.holdId);
    const returned = closed.amount_micros - chargedMicros;
    sql.adjustAccount.run(returned, -closed.amount_micros, closed.account_id);
    const request = e.requestId ?? closed.request_id;
    sql.insertLedger.run(closed.account_id, 'settle', returned, -closed.amount_micros, e.holdId, request, closed.model, null, e.now);
    const flags = unbilledMicros > 0 ? [...e.flags, 'capped'] : e.flags;
    sql.insertUsage.run(
      e.usageId,
      closed.account_id,
      closed.key_id,
      e.holdId,
      request,
      closed.model,
      closed.endpoint,
      e.units,
      chargedMicros,
      e.now,
      unbilledMicros,
      flags.length > 0 ? flags.join(',') : null,
      closed.client_request_id,
      e.upstreamMs ?? null,
      e.channel ?? null,
      e.attempts ?? null,
    );
    return { kind: 'applied', chargedMicros, unbilledMicros };
  }

  function release(e: { holdId: string; note: string | null; now: number }): boolean {
    const closed = sql.closeHold.get('released', null, e.now, e.holdId) as ClosedHold | undefined;
    if (!closed) return false;
    sql.adjustAccount.run(closed.amount_micros, -closed.amount_micros, closed.account_id);
    sql.insertLedger.run(closed.account_id, 'release', closed.amount_micros, -closed.amount_micros, e.holdId, closed.request_id, closed.model, e.note, e.now);
    return true;
  }

  const writeAll = sqlite.transaction((steps: PendingStep[]) => steps.map((step) => step.run()));
  const writeOne = sqlite.transaction((step: PendingStep) => step.run());
  const begin = sqlite.prepare('begin');
  const commit = sqlite.prepare('commit');
  const rollback = sqlite.prepare('rollback');

  /** The transaction steps run in at once, until it commits; undefined when none is open. */
  let open: OpenBatch | undefined;

  /** Commits the open transaction, if any; its steps' promises resolve, or all reject if the commit fails. */
  function commitOpen() {
    const batch = open;
    if (!batch) return;
    open = undefined;
    try {
      checkWritable(); // a store that stopped taking writes since the steps ran (Store.failWrites)
      commit.run();
      batch.committed.resolve();
    } catch (error) {
      // SQLite may have ended the transaction itself (SQLITE_FULL, SQLITE_IOERR).
      if (sqlite.inTransaction) rollback.run();
      log?.warn({ err: error, steps: batch.steps }, 'a commit of ledger steps failed; none of its steps was written');
      batch.committed.reject(error);
    }
  }

  /**
   * Runs a step now, in the open transaction (begun here if none is), and returns its answer with the
   * commit it waits for; undefined when a transaction of Kysely's is open and the step must queue.
   * Throws what the step threw, its savepoint undone.
   */
  function runAtOnce<T>(run: () => T): { value: T; committed: Promise<void> } | undefined {
    if (!open) {
      if (sqlite.inTransaction) return undefined;
      checkWritable();
      begin.run();
      open = { steps: 0, committed: deferred() };
      // After the event loop's poll phase: the steps of every request read in it share one commit.
      setImmediate(commitOpen);
    } else checkWritable();
    const batch = open;
    try {
      const value = writeOne({ run, resolve: noop, reject: noop }) as T;
      batch.steps += 1;
      return { value, committed: batch.committed.promise };
    } catch (error) {
      // On some errors (SQLITE_FULL, SQLITE_IOERR) SQLite rolls the whole transaction back itself:
      // then none of the batch's steps will be written, and its callers hear so now.
      if (!sqlite.inTransaction && open === batch) {
        open = undefined;
        batch.committed.reject(error);
      }
      throw error;
    }
  }

  async function flush() {
    scheduled = false;
    const steps = queue;
    queue = [];
    await db
      .connection()
      .execute(async () => {
        commitOpen(); // never nest inside it: its steps' promises resolve only at its own commit
        try {
          checkWritable();
          const values = writeAll(steps);
          steps.forEach((step, i) => step.resolve(values[i]));
        } catch (error) {
          if (steps.length === 1) return steps[0]!.reject(error);
          // The batch was undone as a whole: each step again in its own transaction, so only the one at fault fails.
          log?.warn({ err: error, steps: steps.length }, 'a batch of ledger steps failed; writing its steps one by one');
          for (const step of steps) {
            try {
              checkWritable();
              step.resolve(writeOne(step));
            } catch (stepError) {
              step.reject(stepError);
            }
          }
        }
      })
      .catch((error: unknown) => {
        for (const step of steps) step.reject(error); // no connection: nothing was written (a settled promise ignores this)
      });
  }

  function enqueue<T>(run: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      queue.push({ run, resolve: resolve as (value: unknown) => void, reject });
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    });
  }

  /** A step at once when it can be, else queued; either way its promise resolves after its commit. */
  function step<T>(run: () => T): Promise<T> {
    let now: { value: T; committed: Promise<void> } | undefined;
    try {
      now = runAtOnce(run);
    } catch (error) {
      return Promise.reject(error);
    }
    return now ? now.committed.then(() => now.value) : enqueue(run);
  }

  return {
    hold: (entry) => step(() => hold(entry)),
    holdAtOnce(entry) {
      const now = runAtOnce(() => hold(entry));
      return now && { held: now.value, committed: now.committed };
    },
    settle: (entry) => step(() => settle(entry)),
    release: (entry) => step(() => release(entry)),
    beforeForeignStatement: commitOpen,
  };
}

interface OpenBatch {
  steps: number;
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
  promise.catch(noop);
  return { promise, resolve, reject };
}

const noop = () => {};
