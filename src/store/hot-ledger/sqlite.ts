// The hold and settle steps on SQLite: prepared statements run synchronously, and every step asked
// for while the event loop polls is written in one transaction (a group commit). A caller's promise
// resolves only after that transaction has committed, so an acknowledged step is never lost to a
// crash of the process. A step that fails undoes its batch, whose steps are then written one by
// one, so that only it fails (cheaper than a savepoint around every step, since steps rarely fail).
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

function statements(sqlite: Database.Database) {
  return {
    moveToHeld: sqlite.prepare(
      'update accounts set balance_micros = balance_micros - @amount, held_micros = held_micros + @amount where id = @account and balance_micros >= @amount',
    ),
    insertHold: sqlite.prepare(
      `insert into holds (id, account_id, key_id, amount_micros, state, request_id, model, endpoint, task_id, charged_micros, created_at, ended_at, instance_id, progress, client_request_id)
       values (@id, @account, @key, @amount, 'open', @request, @model, @endpoint, null, null, @now, null, @instance, null, @clientRequest)`,
    ),
    insertLedger: sqlite.prepare(
      `insert into ledger (account_id, kind, balance_delta_micros, held_delta_micros, hold_id, request_id, model, note, created_at)
       values (@account, @kind, @balanceDelta, @heldDelta, @hold, @request, @model, @note, @now)`,
    ),
    closeHold: sqlite.prepare(
      `update holds set state = @state, charged_micros = @charged, ended_at = @now where id = @id and state = 'open' and cap_periods is null
       returning account_id, amount_micros, key_id, request_id, model, endpoint, client_request_id`,
    ),
    setCharged: sqlite.prepare('update holds set charged_micros = @charged where id = @id'),
    accountFunds: sqlite.prepare('select balance_micros, overdraft_micros from accounts where id = ?'),
    adjustAccount: sqlite.prepare(
      'update accounts set balance_micros = balance_micros + @balanceDelta, held_micros = held_micros + @heldDelta where id = @account',
    ),
    insertUsage: sqlite.prepare(
      `insert into usage (id, account_id, key_id, hold_id, request_id, model, endpoint, units, amount_micros, created_at, unbilled_micros, flags, client_request_id, upstream_ms, channel, attempts)
       values (@id, @account, @key, @hold, @request, @model, @endpoint, @units, @amount, @now, @unbilled, @flags, @clientRequest, @upstreamMs, @channel, @attempts)`,
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
    if (sql.moveToHeld.run({ account: e.accountId, amount: e.amountMicros }).changes === 0) return false;
    sql.insertHold.run({
      id: e.holdId,
      account: e.accountId,
      key: e.keyId,
      amount: e.amountMicros,
      request: e.requestId,
      model: e.model,
      endpoint: e.endpoint,
      now: e.now,
      instance: e.instanceId,
      clientRequest: e.clientRequestId,
    });
    sql.insertLedger.run({
      account: e.accountId,
      kind: 'hold',
      balanceDelta: -e.amountMicros,
      heldDelta: e.amountMicros,
      hold: e.holdId,
      request: e.requestId,
      model: e.model,
      note: null,
      now: e.now,
    });
    return true;
  }

  function settle(e: SettleEntry): SettleResult {
    const closed = sql.closeHold.get({ id: e.holdId, state: 'settled', charged: e.chargeMicros, now: e.now }) as ClosedHold | undefined;
    if (!closed) return { kind: 'not-open' };
    let funds = { balance_micros: 0, overdraft_micros: 0 };
    if (e.chargeMicros > closed.amount_micros) funds = sql.accountFunds.get(closed.account_id) as typeof funds;
    const { chargedMicros, unbilledMicros } = capCharge({
      chargeMicros: e.chargeMicros,
      heldMicros: closed.amount_micros,
      balanceMicros: funds.balance_micros,
      overdraftMicros: funds.overdraft_micros,
    });
    if (chargedMicros !== e.chargeMicros) sql.setCharged.run({ id: e.holdId, charged: chargedMicros });
    const returned = closed.amount_micros - chargedMicros;
    sql.adjustAccount.run({ account: closed.account_id, balanceDelta: returned, heldDelta: -closed.amount_micros });
    const request = e.requestId ?? closed.request_id;
    sql.insertLedger.run({
      account: closed.account_id,
      kind: 'settle',
      balanceDelta: returned,
      heldDelta: -closed.amount_micros,
      hold: e.holdId,
      request,
      model: closed.model,
      note: null,
      now: e.now,
    });
    const flags = unbilledMicros > 0 ? [...e.flags, 'capped'] : e.flags;
    sql.insertUsage.run({
      id: e.usageId,
      account: closed.account_id,
      key: closed.key_id,
      hold: e.holdId,
      request,
      model: closed.model,
      endpoint: closed.endpoint,
      units: e.units,
      amount: chargedMicros,
      now: e.now,
      unbilled: unbilledMicros,
      flags: flags.length > 0 ? flags.join(',') : null,
      clientRequest: closed.client_request_id,
      upstreamMs: e.upstreamMs ?? null,
      channel: e.channel ?? null,
      attempts: e.attempts ?? null,
    });
    return { kind: 'applied', chargedMicros, unbilledMicros };
  }

  function release(e: { holdId: string; note: string | null; now: number }): boolean {
    const closed = sql.closeHold.get({ id: e.holdId, state: 'released', charged: null, now: e.now }) as ClosedHold | undefined;
    if (!closed) return false;
    sql.adjustAccount.run({ account: closed.account_id, balanceDelta: closed.amount_micros, heldDelta: -closed.amount_micros });
    sql.insertLedger.run({
      account: closed.account_id,
      kind: 'release',
      balanceDelta: closed.amount_micros,
      heldDelta: -closed.amount_micros,
      hold: e.holdId,
      request: closed.request_id,
      model: closed.model,
      note: e.note,
      now: e.now,
    });
    return true;
  }

  const writeAll = sqlite.transaction((steps: PendingStep[]) => steps.map((step) => step.run()));
  const writeOne = sqlite.transaction((step: PendingStep) => step.run());

  async function flush() {
    scheduled = false;
    const steps = queue;
    queue = [];
    await db
      .connection()
      .execute(async () => {
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
        // After the event loop's poll phase: the steps of every request read in it share one commit.
        setImmediate(flush);
      }
    });
  }

  return {
    hold: (entry) => enqueue(() => hold(entry)),
    settle: (entry) => enqueue(() => settle(entry)),
    release: (entry) => enqueue(() => release(entry)),
  };
}
