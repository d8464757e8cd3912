// A settle that reaches the store after the recovery sweep released its hold (DESIGN §3: a settle is
// never lost). An instance cut off from the store (a partition, a stalled connection) keeps the
// settles of calls it answered and writes them when it can again; meanwhile another instance may
// have taken it for dead and released its holds. The answer went out, so the call is billed: the
// charge is taken from the balance the release gave back, in one transaction that turns the hold
// from 'released' into 'settled' (the exactly-once gate: a second try finds it settled and moves
// nothing), with a ledger row and a usage row naming the hold. A stream's hold the sweep settled
// from its recorded progress has that charge replaced by the settle's, once.
import { type Kysely, sql } from 'kysely';
import { lockAccount } from '../store/accounts.js';
import { insertLedgerRow } from '../store/ledger-rows.js';
import type { Store } from '../store/open.js';
import type { DB } from '../store/schema.js';
import { capCharge } from './charge-cap.js';
import { moveKeySpend } from './key-limits.js';
import { insertHoldUsage, type SettleOptions, type SettleOutcome } from './ledger.js';
import { ledgerRow, requireMicros } from './movements.js';
import { usagePriceId } from './price-lists.js';

/** Flag on the usage row of a settle that landed after the sweep had released its hold. */
export const LATE_FLAG = 'late';

const NOT_APPLIED: SettleOutcome = { applied: false, chargedMicros: 0, unbilledMicros: 0 };

/**
 * Charges the settle of a call hold that the recovery sweep ended: released, or settled from the
 * progress its stream had recorded (then the settle's charge replaces that one). Not applied
 * (nothing moved) for any other hold: open, settled by its own call, or a task's.
 */
export async function settleReleasedHold(store: Store, holdId: string, options: SettleOptions): Promise<SettleOutcome> {
  requireMicros('chargeMicros', options.chargeMicros, { min: 0 });
  return store.db.transaction().execute(async (trx) => {
    const released = await settleReleasedHoldIn(trx, holdId, options);
    return released.applied ? released : resettleSweptHoldIn(trx, holdId, options);
  });
}

async function settleReleasedHoldIn(
  trx: Kysely<DB>,
  holdId: string,
  { chargeMicros, units, requestId, flags = [], upstreamMs, channel, attempts, prices, priceId, now = Date.now() }: SettleOptions,
): Promise<SettleOutcome> {
  // Only a call's hold (an instance's) is swept; a task's hold is the task engine's alone.
  const hold = await trx
    .updateTable('holds')
    .set({ state: 'settled', charged_micros: 0, ended_at: now })
    .where('id', '=', holdId)
    .where('state', '=', 'released')
    .where('instance_id', 'is not', null)
    .where('task_id', 'is', null)
    .returning(['account_id', 'key_id', 'amount_micros', 'request_id', 'model', 'endpoint', 'client_request_id', 'cap_periods'])
    .executeTakeFirst();
  if (!hold) return NOT_APPLIED;
  const account = await lockAccount(trx, hold.account_id);
  const balance = account?.balance_micros ?? 0;
  const overdraft = account?.overdraft_micros ?? 0;
  // What the settle would have taken had the hold still been there (the release put it back in the
  // balance), and never the balance below minus the overdraft: it may have been spent since.
  const capped = capCharge({ chargeMicros, heldMicros: hold.amount_micros, balanceMicros: balance - hold.amount_micros, overdraftMicros: overdraft });
  const charged = Math.max(0, Math.min(capped.chargedMicros, balance + overdraft));
  const unbilled = chargeMicros - charged;
  await trx.updateTable('holds').set({ charged_micros: charged }).where('id', '=', holdId).execute();
  await takeLate(trx, hold, { holdId, amountMicros: charged, requestId, now, note: 'late: settled after the recovery sweep had released the hold' });
  await insertHoldUsage(trx, hold, {
    holdId,
    units,
    chargedMicros: charged,
    unbilledMicros: unbilled,
    flags: [...flags, LATE_FLAG],
    requestId,
    upstreamMs,
    channel,
    attempts,
    prices,
    priceId,
    now,
  });
  // The release took the whole hold out of the key's spend; the charge goes back in.
  if (hold.cap_periods !== null && hold.key_id !== null) await moveKeySpend(trx, { keyId: hold.key_id, capPeriods: hold.cap_periods, deltaMicros: charged });
  return { applied: true, chargedMicros: charged, unbilledMicros: unbilled };
}

/**
 * A stream's hold the sweep settled from its recorded progress (its usage row flagged `recovered`):
 * the settle's own charge, what the stream really made, replaces that figure, once (the row is then
 * flagged `late` too). The difference is taken from the balance, never below minus the overdraft,
 * or given back when the recorded progress came to more.
 */
async function resettleSweptHoldIn(trx: Kysely<DB>, holdId: string, options: SettleOptions): Promise<SettleOutcome> {
  const { chargeMicros, requestId, now = Date.now() } = options;
  const hold = await trx
    .selectFrom('holds')
    .select(['account_id', 'key_id', 'amount_micros', 'charged_micros', 'created_at', 'request_id', 'model', 'cap_periods'])
    .where('id', '=', holdId)
    .where('state', '=', 'settled')
    .where('instance_id', 'is not', null)
    .where('task_id', 'is', null)
    .executeTakeFirst();
  if (!hold || hold.charged_micros === null) return NOT_APPLIED;
  const before = hold.charged_micros;
  const account = await lockAccount(trx, hold.account_id);
  const spendable = Math.max(0, (account?.balance_micros ?? 0) + (account?.overdraft_micros ?? 0));
  const wanted = Math.min(chargeMicros, hold.amount_micros) - before;
  const delta = wanted > 0 ? Math.min(wanted, spendable) : wanted;
  const charged = before + delta;
  // The exactly-once gate: the sweep's usage row (by the account's index, from the hold's creation
  // on), not yet replaced. On SQLite it may still wait in usage_recent.
  let replaced = 0n;
  for (const table of ['usage', 'usage_recent'] as const) {
    const result = await trx
      .updateTable(table as 'usage')
      .set({
        amount_micros: charged,
        unbilled_micros: Math.max(0, chargeMicros - charged),
        flags: sql<string>`flags || ${`,${LATE_FLAG}`}`,
        // The settle's prices, which the recorded progress may not have named.
        price_id: sql<string | null>`coalesce(${usagePriceId(options)}, price_id)`,
      })
      .where('account_id', '=', hold.account_id)
      .where('created_at', '>=', hold.created_at)
      .where('hold_id', '=', holdId)
      .where('flags', 'like', '%recovered%')
      .where('flags', 'not like', `%${LATE_FLAG}%`)
      .executeTakeFirst();
    replaced += result.numUpdatedRows;
  }
  if (replaced !== 1n) return NOT_APPLIED;
  await trx.updateTable('holds').set({ charged_micros: charged }).where('id', '=', holdId).execute();
  if (delta !== 0) {
    const note = 'late: the settle replaced the charge the recovery sweep took from recorded progress';
    await takeLate(trx, hold, { holdId, amountMicros: delta, requestId, now, note });
    if (hold.cap_periods !== null && hold.key_id !== null) await moveKeySpend(trx, { keyId: hold.key_id, capPeriods: hold.cap_periods, deltaMicros: delta });
  }
  return { applied: true, chargedMicros: charged, unbilledMicros: Math.max(0, chargeMicros - charged) };
}

/** Takes a late charge (or gives back, when negative) from the balance, with its ledger row. */
async function takeLate(
  trx: Kysely<DB>,
  hold: { account_id: string; request_id: string | null; model: string },
  { holdId, amountMicros, requestId, now, note }: { holdId: string; amountMicros: number; requestId?: string; now: number; note: string },
): Promise<void> {
  await trx
    .updateTable('accounts')
    .set((eb) => ({ balance_micros: eb('balance_micros', '-', amountMicros) }))
    .where('id', '=', hold.account_id)
    .execute();
  const row = {
    accountId: hold.account_id,
    kind: 'settle' as const,
    balanceDelta: -amountMicros,
    holdId,
    requestId: requestId ?? hold.request_id,
    model: hold.model,
    note,
    now,
  };
  await insertLedgerRow(trx, ledgerRow(row));
}
