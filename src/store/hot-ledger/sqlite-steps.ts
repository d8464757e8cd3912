// The three money steps of a metered call on SQLite (hold, settle, release) as prepared statements
// of better-sqlite3, run synchronously by the caller inside its transaction (sqlite.ts batches them).
// Same rules and same rows as billing/ledger.ts's transaction steps; the contract tests run both.
// Each step chains its ledger row itself (migration 018, moveFunds): the row's prev_id is the
// account's last_ledger_id, read in the insert, and the account's one update points it at the new
// row, so the account row and the ledger row are each written once.
import type Database from 'better-sqlite3';
import { capCharge } from '../../billing/charge-cap.js';
import { INSERT_RECENT_USAGE } from '../usage-recent.js';
import type { HoldEntry, SettleEntry, SettleResult } from './types.js';

interface ClosedHold {
  account_id: string;
  amount_micros: number;
  key_id: string | null;
  request_id: string | null;
  model: string;
  endpoint: string;
  client_request_id: string | null;
}

// Positional parameters: binding by name looks each one up on an object, a measurable part of a step.
function statements(sqlite: Database.Database) {
  return {
    /** id, account, key, amount, request, model, endpoint, now, instance, client request */
    insertHold: sqlite.prepare(
      `insert into holds (id, account_id, key_id, amount_micros, state, request_id, model, endpoint, task_id, charged_micros, created_at, ended_at, instance_id, progress, client_request_id)
       values (?, ?, ?, ?, 'open', ?, ?, ?, null, null, ?, null, ?, null, ?)`,
    ),
    /** account, kind, balance delta, held delta, hold, request, model, note, now, account (its chain) */
    insertLedger: sqlite.prepare(
      `insert into ledger (account_id, kind, balance_delta_micros, held_delta_micros, hold_id, request_id, model, note, created_at, prev_id)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?, (select last_ledger_id from accounts where id = ?))`,
    ),
    // Read, then ended by its id in the same step (one synchronous step inside a transaction, so
    // nothing comes between): `update … returning` buffers its rows in an ephemeral table, which
    // SQLite opens and frees as a database of its own on every call.
    /** id */
    openHold: sqlite.prepare(
      `select account_id, amount_micros, key_id, request_id, model, endpoint, client_request_id from holds
       where id = ? and state = 'open' and cap_periods is null`,
    ),
    /** state, charged, now, id */
    endHold: sqlite.prepare('update holds set state = ?, charged_micros = ?, ended_at = ? where id = ?'),
    /** charged, id */
    setCharged: sqlite.prepare('update holds set charged_micros = ? where id = ?'),
    accountFunds: sqlite.prepare('select balance_micros, overdraft_micros from accounts where id = ?'),
    /** balance delta, held delta, ledger row, account */
    adjustAccount: sqlite.prepare('update accounts set balance_micros = balance_micros + ?, held_micros = held_micros + ?, last_ledger_id = ? where id = ?'),
    /** id, account, key, hold, request, model, endpoint, units, amount, now, unbilled, flags, client request, upstream ms, channel, attempts */
    insertUsage: sqlite.prepare(INSERT_RECENT_USAGE),
  };
}

/** What a ledger row says besides its account, amounts and note (a hold entry is one as it is). */
interface LedgerRowText {
  holdId: string;
  requestId: string | null;
  model: string;
  now: number;
}

export interface SqliteSteps {
  /** Whether the account exists and its balance covers the hold: the hold's decision, read without writing. */
  covers(e: HoldEntry): boolean;
  hold(e: HoldEntry): boolean;
  settle(e: SettleEntry): SettleResult;
  release(e: { holdId: string; note: string | null; now: number }): boolean;
}

export function sqliteSteps(sqlite: Database.Database): SqliteSteps {
  const sql = statements(sqlite);

  /**
   * One movement of an account's money: its ledger row, added to the account's chain, and the
   * account's balance and held funds moved by the same amounts, pointed at that row.
   */
  function moveFunds(account: string, kind: string, balanceDelta: number, heldDelta: number, row: LedgerRowText, note: string | null) {
    const { lastInsertRowid: ledgerId } = sql.insertLedger.run(
      account,
      kind,
      balanceDelta,
      heldDelta,
      row.holdId,
      row.requestId,
      row.model,
      note,
      row.now,
      account,
    );
    sql.adjustAccount.run(balanceDelta, heldDelta, ledgerId, account);
  }

  /** Moves an open hold (not a spend-capped one) to `state`: what it held, or undefined when it was not open. */
  function closeHold(holdId: string, state: 'settled' | 'released', chargedMicros: number | null, now: number): ClosedHold | undefined {
    const closed = sql.openHold.get(holdId) as ClosedHold | undefined;
    if (closed) sql.endHold.run(state, chargedMicros, now, holdId);
    return closed;
  }

  function covers(e: HoldEntry): boolean {
    const funds = sql.accountFunds.get(e.accountId) as { balance_micros: number } | undefined;
    return funds !== undefined && funds.balance_micros >= e.amountMicros;
  }

  function hold(e: HoldEntry): boolean {
    if (!covers(e)) return false; // no such account, or not enough: nothing written
    sql.insertHold.run(e.holdId, e.accountId, e.keyId, e.amountMicros, e.requestId, e.model, e.endpoint, e.now, e.instanceId, e.clientRequestId);
    moveFunds(e.accountId, 'hold', -e.amountMicros, e.amountMicros, e, null);
    return true;
  }

  function settle(e: SettleEntry): SettleResult {
    const closed = closeHold(e.holdId, 'settled', e.chargeMicros, e.now);
    if (!closed) return { kind: 'not-open' };
    const { account_id: account } = closed;
    let funds = { balance_micros: 0, overdraft_micros: 0 };
    if (e.chargeMicros > closed.amount_micros) funds = sql.accountFunds.get(account) as typeof funds;
    const { chargedMicros, unbilledMicros } = capCharge({
      chargeMicros: e.chargeMicros,
      heldMicros: closed.amount_micros,
      balanceMicros: funds.balance_micros,
      overdraftMicros: funds.overdraft_micros,
    });
    if (chargedMicros !== e.chargeMicros) sql.setCharged.run(chargedMicros, e.holdId);
    const returned = closed.amount_micros - chargedMicros;
    const request = e.requestId ?? closed.request_id;
    moveFunds(account, 'settle', returned, -closed.amount_micros, { holdId: e.holdId, requestId: request, model: closed.model, now: e.now }, null);
    const flags = unbilledMicros > 0 ? [...e.flags, 'capped'] : e.flags;
    sql.insertUsage.run(
      e.usageId,
      account,
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
    const closed = closeHold(e.holdId, 'released', null, e.now);
    if (!closed) return false;
    const row = { holdId: e.holdId, requestId: closed.request_id, model: closed.model, now: e.now };
    moveFunds(closed.account_id, 'release', closed.amount_micros, -closed.amount_micros, row, e.note);
    return true;
  }

  return { covers, hold, settle, release };
}
