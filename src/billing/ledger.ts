// The money rules of DESIGN §3 for holds: hold, settle, release. Each step is one short
// transaction (or one hot-ledger step) that moves an account's balance/held and writes the ledger
// row(s) saying so, so `balance + held == sum(ledger)` holds after every commit. An account's
// credits are in accounts.ts.
import type { Kysely } from 'kysely';
import type { Price } from '../config/schema.js';
import { insufficientBalance, notFound } from '../errors.js';
import { adjustAccount, findAccount, lockAccount, moveToHeld } from '../store/accounts.js';
import { closeHold, findHold, type HoldRow, insertHold, setCharged } from '../store/holds.js';
import type { HoldEntry } from '../store/hot-ledger/types.js';
import { newId } from '../store/ids.js';
import { insertLedgerRow } from '../store/ledger-rows.js';
import type { Store } from '../store/open.js';
import type { DB, HoldsTable } from '../store/schema.js';
import { insertUsage } from '../store/usage.js';
import { capCharge } from './charge-cap.js';
import { hasSpendCap, type KeyLimits, moveKeySpend, reserveKeySpend } from './key-limits.js';
import { ledgerRow, requireMicros } from './movements.js';
import { savePriceList, usagePriceId } from './price-lists.js';

// `now` is optional everywhere: production uses the clock, tests pin it to compare whole rows.

export interface HoldRequest {
  accountId: string;
  keyId?: string | null;
  amountMicros: number;
  requestId: string;
  model: string;
  endpoint: string;
  taskId?: string | null;
  /** The gateway instance running the call; null for a task's hold (the task engine owns it). */
  instanceId?: string | null;
  /** The caller's own x-request-id, if it sent one. */
  clientRequestId?: string | null;
  /** The key's limits: with a spend cap, the hold also reserves in the key's spend counters. */
  keyLimits?: KeyLimits;
  now?: number;
}

export async function holdFunds(store: Store, request: HoldRequest): Promise<{ holdId: string; amountMicros: number }> {
  requireMicros('amountMicros', request.amountMicros, { min: 0 });
  // A capped key's hold reserves in its spend counters too: only the transaction step does that.
  if (!store.hotLedger || hasSpendCap(request.keyLimits)) return store.db.transaction().execute((trx) => holdFundsIn(trx, request));
  const entry = hotHoldEntry(request);
  if (!(await store.hotLedger.hold(entry))) throw await holdRefusal(store, request);
  return { holdId: entry.holdId, amountMicros: request.amountMicros };
}

/**
 * As holdFunds, but decided at once where the store can (SQLite): the hold is kept in memory and
 * written with its settle, or by `write()` (a stream's, before anything reaches its caller); either
 * rejects with UnwrittenHoldError when it could not be written. Answered without a promise then:
 * one turn less on every call's way.
 */
export function holdFundsAtOnce(store: Store, request: HoldRequest): HeldAtOnce | Promise<HeldAtOnce> {
  requireMicros('amountMicros', request.amountMicros, { min: 0 });
  const hotLedger = store.hotLedger;
  if (!hotLedger?.holdAtOnce || hasSpendCap(request.keyLimits)) return holdFunds(store, request);
  const entry = hotHoldEntry(request);
  const held = hotLedger.holdAtOnce(entry);
  if (held === undefined) return holdFunds(store, request);
  if (!held) return holdRefusal(store, request).then((refusal) => Promise.reject(refusal));
  return {
    holdId: entry.holdId,
    amountMicros: request.amountMicros,
    write: () => hotLedger.writeHold!(entry.holdId),
    upstreamRequestSent: hotLedger.upstreamRequestSent,
  };
}

export interface HeldAtOnce {
  holdId: string;
  amountMicros: number;
  /** A hold decided at once, not yet written: makes it durable now (HotLedger.writeHold; otherwise its settle or release writes it). */
  write?: () => Promise<void>;
  /** Tells the ledger the call's upstream request is on its way: its put-off writes may go (HotLedger.upstreamRequestSent). */
  upstreamRequestSent?: () => void;
}

const hotHoldEntry = (request: HoldRequest): HoldEntry => ({
  holdId: newId('hold'),
  accountId: request.accountId,
  keyId: request.keyId ?? null,
  amountMicros: request.amountMicros,
  requestId: request.requestId,
  model: request.model,
  endpoint: request.endpoint,
  instanceId: request.instanceId ?? null,
  clientRequestId: request.clientRequestId ?? null,
  now: request.now ?? Date.now(),
});

/** Why a hold was not taken: the balance does not cover it (402, saying by how much), or there is no such account. */
const holdRefusal = async (store: Store, request: HoldRequest) => refusalFor(await findAccount(store.db, request.accountId), request);

const refusalFor = (account: { balance_micros: number } | undefined, { accountId, amountMicros }: HoldRequest) =>
  account ? insufficientBalance({ neededMicros: amountMicros, availableMicros: Number(account.balance_micros) }) : notFound(`account ${accountId} not found`);

/** The hold step inside a caller's transaction (a task row and its hold are written together). */
export async function holdFundsIn(trx: Kysely<DB>, request: HoldRequest): Promise<{ holdId: string; amountMicros: number }> {
  const {
    accountId,
    keyId = null,
    amountMicros,
    requestId,
    model,
    endpoint,
    taskId = null,
    instanceId = null,
    clientRequestId = null,
    keyLimits,
    now = Date.now(),
  } = request;
  requireMicros('amountMicros', amountMicros, { min: 0 });
  const holdId = newId('hold');
  if (!(await moveToHeld(trx, { accountId, amountMicros }))) throw refusalFor(await findAccount(trx, accountId), request);
  // After the account's row, as every step takes them; a cap passed throws and rolls all back.
  const capPeriods = keyId !== null && hasSpendCap(keyLimits) ? await reserveKeySpend(trx, { keyId, accountId, limits: keyLimits, amountMicros, now }) : null;
  await insertHold(trx, {
    id: holdId,
    account_id: accountId,
    key_id: keyId,
    amount_micros: amountMicros,
    state: 'open',
    request_id: requestId,
    model,
    endpoint,
    task_id: taskId,
    charged_micros: null,
    created_at: now,
    ended_at: null,
    instance_id: instanceId,
    progress: null,
    client_request_id: clientRequestId,
    cap_periods: capPeriods,
  });
  await insertLedgerRow(
    trx,
    ledgerRow({
      accountId,
      kind: 'hold',
      balanceDelta: -amountMicros,
      heldDelta: amountMicros,
      holdId,
      requestId,
      model,
      now,
    }),
  );
  return { holdId, amountMicros };
}

export interface SettleOptions {
  /** What the usage costs at the model's price; the amount taken is capped (see settleHoldIn). */
  chargeMicros: number;
  units: Record<string, number>;
  requestId?: string;
  /** Notes for the operator on the usage row (`clamped` when usage figures were made sane). */
  flags?: string[];
  /** The channel's answer time, kept on the usage row. */
  upstreamMs?: number;
  /** The channel that served the call and the attempts it took, kept on the usage row. */
  channel?: string;
  attempts?: number;
  /** The call's prices, taken when its hold was made: kept once (price-lists.ts) and named on the usage row. */
  prices?: Price;
  /** Or the id alone, of a list the store keeps already (a recovered stream's). */
  priceId?: string;
  now?: number;
}

export interface SettleOutcome {
  applied: boolean;
  /** Taken from the account. */
  chargedMicros: number;
  /** What the usage came to beyond what could be taken (recorded, counted, never taken). */
  unbilledMicros: number;
}

export async function settleHold(store: Store, holdId: string, options: SettleOptions): Promise<SettleOutcome> {
  requireMicros('chargeMicros', options.chargeMicros, { min: 0 });
  // Prices new to this process are written first, once; known ones cost no statement and no turn.
  const saving = options.prices && savePriceList(store, options.prices);
  if (saving) await saving;
  if (store.hotLedger) {
    const { chargeMicros, units, requestId, flags = [], upstreamMs, channel, attempts, now = Date.now() } = options;
    const result = await store.hotLedger.settle({
      holdId,
      chargeMicros,
      units: JSON.stringify(units),
      requestId: requestId ?? null,
      flags,
      usageId: newId('use'),
      now,
      upstreamMs: upstreamMs === undefined ? null : Math.round(upstreamMs),
      channel: channel ?? null,
      attempts: attempts ?? null,
      priceId: usagePriceId(options),
    });
    if (result.kind === 'applied') return { applied: true, chargedMicros: result.chargedMicros, unbilledMicros: result.unbilledMicros };
    // Otherwise the transaction step decides: a hold ended earlier (rare) it reports as not applied;
    // a hold that reserved in a key's spend caps, or a charge past the hold, it applies.
  }
  return store.db.transaction().execute((trx) => settleHoldIn(trx, holdId, options));
}

/**
 * The settle step inside a caller's transaction (the task engine ends a task and its hold together;
 * it keeps the task's price list first: savePriceList).
 * The charge is capped at the hold plus the account's overdraft, and never takes the balance below
 * minus the overdraft: with the default overdraft of 0, an account pays at most what was held.
 */
export async function settleHoldIn(trx: Kysely<DB>, holdId: string, options: SettleOptions): Promise<SettleOutcome> {
  const { chargeMicros, now = Date.now() } = options;
  requireMicros('chargeMicros', chargeMicros, { min: 0 });
  const hold = await closeHold(trx, { id: holdId, state: 'settled', chargedMicros: chargeMicros, now });
  if (!hold) return { applied: false, chargedMicros: (await endedHold(trx, holdId)).charged_micros ?? 0, unbilledMicros: 0 };
  // Past the hold, the balance and overdraft are read under the account's row lock.
  const funds = chargeMicros > hold.amount_micros ? await lockAccount(trx, hold.account_id) : undefined;
  const { chargedMicros: charged, unbilledMicros: unbilled } = capCharge({
    chargeMicros,
    heldMicros: hold.amount_micros,
    balanceMicros: funds?.balance_micros ?? 0,
    overdraftMicros: funds?.overdraft_micros ?? 0,
  });
  if (charged !== chargeMicros) await setCharged(trx, holdId, charged);
  const returned = hold.amount_micros - charged;
  await adjustAccount(trx, { accountId: hold.account_id, balanceDeltaMicros: returned, heldDeltaMicros: -hold.amount_micros });
  await insertLedgerRow(
    trx,
    ledgerRow({
      accountId: hold.account_id,
      kind: 'settle',
      balanceDelta: returned,
      heldDelta: -hold.amount_micros,
      holdId,
      requestId: options.requestId ?? hold.request_id,
      model: hold.model,
      now,
    }),
  );
  // Written even for a charge of 0: a free model's use is still use (DESIGN §3).
  await insertHoldUsage(trx, hold, { ...options, holdId, chargedMicros: charged, unbilledMicros: unbilled, now });
  if (hold.cap_periods !== null && hold.key_id !== null)
    await moveKeySpend(trx, { keyId: hold.key_id, capPeriods: hold.cap_periods, deltaMicros: charged - hold.amount_micros });
  return { applied: true, chargedMicros: charged, unbilledMicros: unbilled };
}

/** The hold's fields a usage row repeats. */
type HoldOfUsage = Pick<HoldsTable, 'account_id' | 'key_id' | 'request_id' | 'model' | 'endpoint' | 'client_request_id'>;

/** The usage row of a settled hold: what it charged, and `capped` when part of the charge was past the hold. */
export function insertHoldUsage(
  trx: Kysely<DB>,
  hold: HoldOfUsage,
  row: Omit<SettleOptions, 'chargeMicros'> & { holdId: string; chargedMicros: number; unbilledMicros: number; now: number },
): Promise<void> {
  const flags = row.unbilledMicros > 0 ? [...(row.flags ?? []), 'capped'] : (row.flags ?? []);
  return insertUsage(trx, {
    id: newId('use'),
    account_id: hold.account_id,
    key_id: hold.key_id,
    hold_id: row.holdId,
    request_id: row.requestId ?? hold.request_id,
    model: hold.model,
    endpoint: hold.endpoint,
    units: JSON.stringify(row.units),
    amount_micros: row.chargedMicros,
    created_at: row.now,
    unbilled_micros: row.unbilledMicros,
    flags: flags.length > 0 ? flags.join(',') : null,
    client_request_id: hold.client_request_id,
    upstream_ms: row.upstreamMs === undefined ? null : Math.round(row.upstreamMs),
    channel: row.channel ?? null,
    attempts: row.attempts ?? null,
    price_id: usagePriceId(row),
  });
}

export async function releaseHold(store: Store, holdId: string, options: { note?: string; now?: number } = {}): Promise<{ applied: boolean }> {
  if (store.hotLedger && (await store.hotLedger.release({ holdId, note: options.note ?? null, now: options.now ?? Date.now() }))) return { applied: true };
  // Not released there: ended earlier (rare), or reserved in a key's spend caps; the transaction step tells.
  return store.db.transaction().execute((trx) => releaseHoldIn(trx, holdId, options));
}

/** The release step inside a caller's transaction. */
export async function releaseHoldIn(
  trx: Kysely<DB>,
  holdId: string,
  { note, now = Date.now() }: { note?: string; now?: number } = {},
): Promise<{ applied: boolean }> {
  const hold = await closeHold(trx, { id: holdId, state: 'released', chargedMicros: null, now });
  if (!hold) {
    await endedHold(trx, holdId);
    return { applied: false };
  }
  await adjustAccount(trx, {
    accountId: hold.account_id,
    balanceDeltaMicros: hold.amount_micros,
    heldDeltaMicros: -hold.amount_micros,
  });
  await insertLedgerRow(
    trx,
    ledgerRow({
      accountId: hold.account_id,
      kind: 'release',
      balanceDelta: hold.amount_micros,
      heldDelta: -hold.amount_micros,
      holdId,
      requestId: hold.request_id,
      model: hold.model,
      note,
      now,
    }),
  );
  if (hold.cap_periods !== null && hold.key_id !== null)
    await moveKeySpend(trx, { keyId: hold.key_id, capPeriods: hold.cap_periods, deltaMicros: -hold.amount_micros });
  return { applied: true };
}

// A hold not moved out of 'open' by us was either ended earlier or never existed.
async function endedHold(db: Kysely<DB>, holdId: string): Promise<HoldRow> {
  const hold = await findHold(db, holdId);
  if (!hold) throw notFound(`hold ${holdId} not found`);
  return hold;
}
