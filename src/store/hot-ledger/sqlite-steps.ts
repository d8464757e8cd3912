// The money steps of a metered call on SQLite (hold, settle, release, and a hold never written
// with its settle or release) as prepared statements of better-sqlite3, run synchronously by the
// caller inside its transaction (sqlite.ts batches them). Same rules and same rows as
// billing/ledger.ts's transaction steps; the contract tests run both. Each step chains its ledger
// row itself (ledger-chain.ts; the SQL is in sqlite-step-triggers.ts): the row's prev_id is the
// account's last_ledger_id, read in the insert, and the account's one update points it at the new
// row, so the account row and the ledger row are each written once.
import type Database from 'better-sqlite3';
import { capCharge } from '../../billing/charge-cap.js';
import { knownBalances } from './known-balances.js';
import {
  HOLD_COLUMNS,
  HOLD_RELEASE_COLUMNS,
  HOLD_SETTLE_COLUMNS,
  insertInto,
  isOpenHold,
  NOT_COVERED,
  NOT_OPEN,
  RELEASE_COLUMNS,
  raised,
  SETTLE_COLUMNS,
  STEP_TRIGGERS,
} from './sqlite-step-triggers.js';
import type { HoldEntry, SettleEntry, SettleResult } from './types.js';

/** What a step that ends a hold reads of it while it is open. */
interface OpenHoldRow {
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
  sqlite.exec(STEP_TRIGGERS);
  return {
    /** hold, account, key, amount, request, model, endpoint, now, instance, client request, reserved */
    writeHold: sqlite.prepare(insertInto('hot_hold', HOLD_COLUMNS)),
    /** hold, account, charged, held, request, model, now, usage, key, endpoint, units, unbilled, flags, client request, upstream ms, channel, attempts, price list */
    writeSettle: sqlite.prepare(insertInto('hot_settle', SETTLE_COLUMNS)),
    /** hold, account, held, request, model, note, now */
    writeRelease: sqlite.prepare(insertInto('hot_release', RELEASE_COLUMNS)),
    /** hold, account, key, held, request, model, endpoint, held at, instance, client request, note, now */
    writeHoldRelease: sqlite.prepare(insertInto('hot_hold_release', HOLD_RELEASE_COLUMNS)),
    /** hold, account, key, held, request, model, endpoint, held at, instance, client request, charged, settle's request, now, usage, units, unbilled, flags, upstream ms, channel, attempts, price list, checked */
    writeHoldSettle: sqlite.prepare(insertInto('hot_hold_settle', HOLD_SETTLE_COLUMNS)),
    // Read before the step's write (one synchronous step inside a transaction, so nothing comes
    // between): `update … returning` buffers its rows in an ephemeral table, which SQLite opens
    // and frees as a database of its own on every call.
    /** id */
    openHold: sqlite.prepare(
      `select account_id, amount_micros, key_id, request_id, model, endpoint, client_request_id from holds
       where ${isOpenHold('?')}`,
    ),
    accountFunds: sqlite.prepare('select balance_micros, overdraft_micros from accounts where id = ?'),
    // The value alone (pluck): no row object built for the one number a hold's decision reads.
    /** id */
    accountBalance: sqlite.prepare('select balance_micros from accounts where id = ?').pluck(),
  };
}

export interface SqliteSteps {
  /**
   * The account's balance (undefined: no such account) for a hold's decision, as this connection
   * last read it plus its own steps' movements since (known-balances.ts); read afresh when not known,
   * too old, or `fresh`.
   */
  balance(accountId: string, fresh?: boolean): number | undefined;
  /** Forgets every known balance: a statement not of these steps may have moved any (Kysely's, an undone step). */
  forgetBalances(): void;
  /** False when the balance, less `reservedMicros`, does not cover the hold (nothing written). */
  hold(e: HoldEntry, reservedMicros?: number): boolean;
  /**
   * A hold never written and its settle, as one step: the rows both would write, the hold row
   * written once, already settled. 'not-covered' when the balance no longer covers the hold (nothing written).
   */
  holdAndSettle(h: HoldEntry, e: SettleEntry): SettleResult | { kind: 'not-covered' };
  /**
   * As holdAndSettle, for a settle whose answer went out already (answered-settles.ts): when the
   * balance no longer covers the hold (another process spent it), the charge is capped to what the
   * balance and overdraft have left, the rest recorded unbilled, and `uncovered` says so.
   */
  holdAndSettleAnswered(h: HoldEntry, e: SettleEntry): { kind: 'applied'; chargedMicros: number; unbilledMicros: number; uncovered: boolean };
  /** A hold never written and its release, as one step (a record of the call); false when the balance no longer covers it (nothing written). */
  holdAndRelease(h: HoldEntry, e: { note: string | null; now: number }): boolean;
  settle(e: SettleEntry): SettleResult;
  release(e: { holdId: string; note: string | null; now: number }): boolean;
}

// Holds this connection took and has not yet seen end, so that ending one needs no read of its row.
// A cache, not the truth: the end's guard (isOpenHold, sqlite-step-triggers.ts) refuses an end whose hold is no longer open, and an end
// of a hold missing here (taken by another writer, or dropped when the cache was full) reads it.
const HELD_HERE_LIMIT = 100_000;

export function sqliteSteps(sqlite: Database.Database): SqliteSteps {
  const sql = statements(sqlite);
  const heldHere = new Map<string, OpenHoldRow>();
  const balances = knownBalances();

  /** What an open hold (not a spend-capped one) holds, or undefined when it is not open. */
  const openHold = (holdId: string) => sql.openHold.get(holdId) as OpenHoldRow | undefined;

  /**
   * Runs `write` for the open hold: first from memory, when this connection took it; if the guard
   * finds it not open after all (ended elsewhere), or memory does not know it, from its row.
   * Undefined when it is not open.
   */
  function endOpenHold<T>(holdId: string, write: (hold: OpenHoldRow) => T): T | undefined {
    const known = heldHere.get(holdId);
    if (known) {
      heldHere.delete(holdId);
      try {
        return write(known);
      } catch (error) {
        if (!raised(error, NOT_OPEN)) throw error;
      }
    }
    const row = openHold(holdId);
    return row && write(row);
  }

  function balance(accountId: string, fresh = false): number | undefined {
    const now = performance.now();
    const known = fresh ? undefined : balances.get(accountId, now);
    if (known !== undefined) return known;
    const micros = sql.accountBalance.get(accountId) as number | undefined;
    if (micros !== undefined) balances.read(accountId, micros, now);
    return micros;
  }

  /** The balance no longer covered a write that memory said it would: another writer spent it. */
  function notCovered(accountId: string) {
    balances.forget(accountId);
  }

  function hold(e: HoldEntry, reservedMicros = 0): boolean {
    try {
      sql.writeHold.run(
        e.holdId,
        e.accountId,
        e.keyId,
        e.amountMicros,
        e.requestId,
        e.model,
        e.endpoint,
        e.now,
        e.instanceId,
        e.clientRequestId,
        reservedMicros,
      );
    } catch (error) {
      if (raised(error, NOT_COVERED)) {
        notCovered(e.accountId);
        return false; // no such account, or not enough: nothing written
      }
      throw error;
    }
    balances.move(e.accountId, -e.amountMicros);
    if (heldHere.size >= HELD_HERE_LIMIT) heldHere.clear(); // ends of holds ended elsewhere never come
    heldHere.set(e.holdId, {
      account_id: e.accountId,
      amount_micros: e.amountMicros,
      key_id: e.keyId,
      request_id: e.requestId,
      model: e.model,
      endpoint: e.endpoint,
      client_request_id: e.clientRequestId,
    });
    return true;
  }

  /**
   * The settle's charge capped (billing/charge-cap.ts) and its flags. The account is read only for a
   * charge past the hold; `unwrittenHold`: the hold's amount when it is written with the settle.
   */
  function capped(e: SettleEntry, account: string, heldMicros: number, unwrittenHold = 0) {
    let funds = { balance_micros: 0, overdraft_micros: 0 };
    if (e.chargeMicros > heldMicros) funds = sql.accountFunds.get(account) as typeof funds;
    const { chargedMicros, unbilledMicros } = capCharge({
      chargeMicros: e.chargeMicros,
      heldMicros,
      balanceMicros: funds.balance_micros - unwrittenHold,
      overdraftMicros: funds.overdraft_micros,
    });
    const flags = unbilledMicros > 0 ? [...e.flags, 'capped'] : e.flags;
    return { chargedMicros, unbilledMicros, flags: flags.length > 0 ? flags.join(',') : null };
  }

  function writeSettle(e: SettleEntry, held: OpenHoldRow): SettleResult {
    const { account_id: account } = held;
    const { chargedMicros, unbilledMicros, flags } = capped(e, account, held.amount_micros);
    sql.writeSettle.run(
      e.holdId,
      account,
      chargedMicros,
      held.amount_micros,
      e.requestId ?? held.request_id,
      held.model,
      e.now,
      e.usageId,
      held.key_id,
      held.endpoint,
      e.units,
      unbilledMicros,
      flags,
      held.client_request_id,
      e.upstreamMs ?? null,
      e.channel ?? null,
      e.attempts ?? null,
      e.priceId ?? null,
    );
    balances.move(account, held.amount_micros - chargedMicros);
    return { kind: 'applied', chargedMicros, unbilledMicros };
  }

  const settle = (e: SettleEntry): SettleResult => endOpenHold(e.holdId, (held) => writeSettle(e, held)) ?? { kind: 'not-open' };

  function release(e: { holdId: string; note: string | null; now: number }): boolean {
    const write = (held: OpenHoldRow) => {
      sql.writeRelease.run(e.holdId, held.account_id, held.amount_micros, held.request_id, held.model, e.note, e.now);
      balances.move(held.account_id, held.amount_micros);
      return true;
    };
    return endOpenHold(e.holdId, write) ?? false;
  }

  function writeHoldSettle(h: HoldEntry, e: SettleEntry, charged: ReturnType<typeof capped>, checked: boolean) {
    // biome-ignore format: the hold's columns, then the settle's
    sql.writeHoldSettle.run(
      h.holdId, h.accountId, h.keyId, h.amountMicros, h.requestId, h.model, h.endpoint, h.now, h.instanceId, h.clientRequestId,
      charged.chargedMicros, e.requestId ?? h.requestId, e.now, e.usageId, e.units, charged.unbilledMicros, charged.flags,
      e.upstreamMs ?? null, e.channel ?? null, e.attempts ?? null, e.priceId ?? null, checked ? 1 : 0,
    );
    balances.move(h.accountId, -charged.chargedMicros);
  }

  function holdAndSettle(h: HoldEntry, e: SettleEntry): SettleResult | { kind: 'not-covered' } {
    const charged = capped(e, h.accountId, h.amountMicros, h.amountMicros);
    try {
      writeHoldSettle(h, e, charged, true);
    } catch (error) {
      if (!raised(error, NOT_COVERED)) throw error;
      notCovered(h.accountId);
      return { kind: 'not-covered' };
    }
    return { kind: 'applied', chargedMicros: charged.chargedMicros, unbilledMicros: charged.unbilledMicros };
  }

  function holdAndSettleAnswered(h: HoldEntry, e: SettleEntry) {
    const covered = holdAndSettle(h, e);
    // (a literal, not a spread: one hidden class for every answer)
    if (covered.kind === 'applied')
      return { kind: 'applied' as const, chargedMicros: covered.chargedMicros, unbilledMicros: covered.unbilledMicros, uncovered: false };
    // Taken down to minus the overdraft at most, never past it (DESIGN §3); the rest is unbilled.
    const funds = sql.accountFunds.get(h.accountId) as { balance_micros: number; overdraft_micros: number };
    const chargedMicros = Math.max(0, Math.min(e.chargeMicros, funds.balance_micros + funds.overdraft_micros));
    const unbilledMicros = e.chargeMicros - chargedMicros;
    const flags = unbilledMicros > 0 ? [...e.flags, 'capped'].join(',') : e.flags.join(',') || null;
    writeHoldSettle(h, e, { chargedMicros, unbilledMicros, flags }, false);
    return { kind: 'applied' as const, chargedMicros, unbilledMicros, uncovered: true };
  }

  function holdAndRelease(h: HoldEntry, e: { note: string | null; now: number }): boolean {
    try {
      // biome-ignore format: the hold's columns, then the release's
      sql.writeHoldRelease.run(
        h.holdId, h.accountId, h.keyId, h.amountMicros, h.requestId, h.model, h.endpoint, h.now, h.instanceId, h.clientRequestId,
        e.note, e.now,
      );
    } catch (error) {
      if (!raised(error, NOT_COVERED)) throw error;
      notCovered(h.accountId);
      return false;
    }
    return true;
  }

  return { balance, forgetBalances: balances.clear, hold, holdAndSettle, holdAndSettleAnswered, holdAndRelease, settle, release };
}
