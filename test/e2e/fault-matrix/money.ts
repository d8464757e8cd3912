// The money side of a cell, read over the admin API: exactly one hold, ended exactly once, with
// the documented amount (released: the balance as it was; billed: the usage row's amount, more
// than nothing and no more than the hold, nor than the completed call when the cell knows its cost).
import assert from 'node:assert/strict';
import type { TestGateway } from '../../helpers/gateway.js';
import { waitFor } from './calls.js';
import type { MoneyRule } from './matrix.js';

interface LedgerRow {
  id: string;
  kind: string;
  amount_micros: number;
  held_delta_micros: number;
  hold_id: string | null;
}

interface UsageRow {
  id: string;
  units: Record<string, number>;
  amount_micros: number;
  hold_id: string | null;
}

export interface MoneyBefore {
  ledgerIds: Set<string>;
  usageIds: Set<string>;
  balanceMicros: number;
}

const ledgerOf = async (gw: TestGateway, accountId: string): Promise<LedgerRow[]> =>
  (await gw.admin('GET', `/admin/accounts/${accountId}/ledger?limit=100`)).body.data;
const usageOf = async (gw: TestGateway, accountId: string): Promise<UsageRow[]> =>
  (await gw.admin('GET', `/admin/accounts/${accountId}/usage?limit=100`)).body.data;

/** A fresh account: its credit, and nothing else. */
export const freshAccount = (creditMicros: number): MoneyBefore => ({ ledgerIds: new Set(), usageIds: new Set(), balanceMicros: creditMicros });

/** The account before the cell's call: rows written by its preparation are not the cell's. */
export async function moneyBefore(gw: TestGateway, accountId: string): Promise<MoneyBefore> {
  const [ledger, usage, account] = await Promise.all([ledgerOf(gw, accountId), usageOf(gw, accountId), gw.balance(accountId)]);
  assert.equal(account.held_micros, 0, 'nothing held before the cell');
  return { ledgerIds: new Set(ledger.map((row) => row.id)), usageIds: new Set(usage.map((row) => row.id)), balanceMicros: account.balance_micros };
}

export async function checkMoney(gw: TestGateway, accountId: string, before: MoneyBefore, rule: MoneyRule): Promise<void> {
  // the hold ends when the call, the stream or the task does: wait for it, then read what it wrote
  const account = await waitFor(
    async () => {
      const now = await gw.balance(accountId);
      return now.held_micros === 0 && now;
    },
    { timeoutMs: 15_000 },
  );
  const ledger = (await ledgerOf(gw, accountId)).filter((row) => row.kind !== 'credit' && !before.ledgerIds.has(row.id));
  const usage = (await usageOf(gw, accountId)).filter((row) => !before.usageIds.has(row.id));
  const rows = JSON.stringify(ledger.map((row) => [row.kind, row.amount_micros]));

  const holds = ledger.filter((row) => row.kind === 'hold');
  assert.equal(holds.length, 1, `one hold, not ${holds.length}: ${rows}`);
  const hold = holds[0]!;
  const ends = ledger.filter((row) => row !== hold);
  assert.equal(ends.length, 1, `the hold ended exactly once: ${rows}`);
  const end = ends[0]!;
  assert.equal(end.hold_id, hold.hold_id, 'the end is of the cell’s hold');

  if (rule.kind === 'release') {
    assert.equal(end.kind, 'release', `released in full, not ${end.kind}: ${rows} ${JSON.stringify(usage)}`);
    assert.deepEqual(usage, [], 'a released hold has no usage row');
    assert.equal(account.balance_micros, before.balanceMicros, 'the balance is back to what it was, to the micro');
    return;
  }
  if (rule.kind === 'recorded') {
    assert.equal(end.kind, 'settle', `settled at 0, not ${end.kind}: ${rows}`);
    assert.ok(end.amount_micros === 0, `nothing taken by the settle: ${rows}`);
    assert.deepEqual(
      usage.map((row) => ({ hold_id: row.hold_id, amount_micros: row.amount_micros })),
      [{ hold_id: hold.hold_id, amount_micros: 0 }],
      'one usage row of 0',
    );
    assert.equal(account.balance_micros, before.balanceMicros, 'the balance is back to what it was, to the micro');
    return;
  }
  assert.equal(end.kind, 'settle', `billed, not ${end.kind}: ${rows}`);
  assert.equal(usage.length, 1, `one usage row for the settle, not ${usage.length}`);
  const used = usage[0]!;
  assert.equal(used.hold_id, hold.hold_id, 'the usage row is the hold’s');
  const held = hold.held_delta_micros;
  assert.ok(
    used.amount_micros > 0 && used.amount_micros <= held,
    `billed ${used.amount_micros} for a hold of ${held}: more than nothing, no more than the hold`,
  );
  if (rule.atMostMicros !== undefined) {
    assert.ok(used.amount_micros <= rule.atMostMicros, `billed ${used.amount_micros}, more than the completed call's ${rule.atMostMicros}`);
  }
  assert.equal(-end.amount_micros, used.amount_micros, 'the settle row takes what the usage row says');
  assert.equal(account.balance_micros, before.balanceMicros - used.amount_micros, 'the balance is down by the amount billed, to the micro');
  rule.check(used.units);
}

/** What `call` cost completed: the amount of the usage row it wrote, read once its hold has ended. */
export async function chargeOf(gw: TestGateway, accountId: string, call: () => Promise<void>): Promise<number> {
  const earlier = new Set((await usageOf(gw, accountId)).map((row) => row.id));
  await call();
  const row = await waitFor(async () => (await gw.balance(accountId)).held_micros === 0 && (await usageOf(gw, accountId)).find((r) => !earlier.has(r.id)), {
    timeoutMs: 15_000,
  });
  return row.amount_micros;
}
