// A settle that lands after another instance's sweep released its hold (the instance was cut off from
// the store while its call was answered) is still billed, exactly once, and the ledger still sums.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { checkAccountBalance, createAccount } from '../../src/billing/accounts.js';
import { holdFunds } from '../../src/billing/ledger.js';
import { endOrphanedHolds } from '../../src/billing/recovery.js';
import { createSettlements, type HoldEnd } from '../../src/billing/settlements.js';
import { StoreHealth } from '../../src/store/health.js';
import { findHold, recordProgress } from '../../src/store/holds.js';
import { registerInstance } from '../../src/store/instances.js';
import { openStore, type Store } from '../../src/store/open.js';
import { freshSchemaUrls, requirePostgresOrSkip } from '../helpers/postgres.js';

const quiet = { info() {}, warn() {}, error() {} };
const call = { requestId: 'r', model: 'm', endpoint: 'e' };
const noMetrics = { addBilled() {}, addUnbilled() {} };

function settlementsOn(store: Store, journalPath = path.join(mkdtempSync(path.join(tmpdir(), 'tollroute-late-')), 'pending.jsonl')) {
  return createSettlements({ store, health: new StoreHealth(quiet), journalPath, firstRetryMs: 3_600_000, metrics: noMetrics, log: quiet });
}

/** A hold of an instance that went silent a minute ago, as a partitioned one looks to the others. */
async function cutOffHold(store: Store, creditMicros: number, amountMicros: number) {
  const account = await createAccount(store, { name: 'cut-off', creditMicros });
  const now = Date.now();
  await registerInstance(store.db, { id: 'inst_cut', now: now - 60_000 });
  const { holdId } = await holdFunds(store, { accountId: account.id, amountMicros, ...call, instanceId: 'inst_cut' });
  const sweep = () => endOrphanedHolds(store, { heartbeatBefore: now - 20_000, legacyCreatedBefore: 0, log: quiet });
  return { accountId: account.id, holdId, sweep };
}

const settleOf = (holdId: string, chargeMicros: number): HoldEnd => ({ kind: 'settle', holdId, model: 'm', chargeMicros, units: { call: 1 } });

test('a settle kept while the store refused it is charged when it lands after the sweep released its hold', async () => {
  const store = await openStore('sqlite::memory:');
  const { accountId, holdId, sweep } = await cutOffHold(store, 1_000, 300);
  const settlements = settlementsOn(store);

  store.failWrites!('SQLITE_IOERR');
  assert.equal(await settlements.end(settleOf(holdId, 120)), undefined, 'kept for a retry');
  store.failWrites!(null);
  assert.deepEqual(await sweep(), { settled: 0, released: 1 });

  await settlements.drain(5_000);
  assert.equal(settlements.pending(), 0);
  const hold = await findHold(store.db, holdId);
  assert.deepEqual({ state: hold?.state, charged: hold?.charged_micros }, { state: 'settled', charged: 120 });
  assert.deepEqual(await checkAccountBalance(store, accountId), {
    balanceMicros: 880,
    heldMicros: 0,
    ledgerBalanceMicros: 880,
    ledgerHeldMicros: 0,
    consistent: true,
  });
  settlements.stop();
  await store.close();
});

test('a late settle tried again charges nothing more', async () => {
  const store = await openStore('sqlite::memory:');
  const { accountId, holdId, sweep } = await cutOffHold(store, 1_000, 300);
  await sweep();
  const settlements = settlementsOn(store);
  assert.equal((await settlements.end(settleOf(holdId, 120)))?.applied, true);
  assert.equal((await settlements.end(settleOf(holdId, 120)))?.applied, false);
  assert.equal((await checkAccountBalance(store, accountId)).balanceMicros, 880);
  settlements.stop();
  await store.close();
});

test('a late settle takes the balance no lower than zero and records the rest as unbilled', async () => {
  const store = await openStore('sqlite::memory:');
  const { accountId, holdId, sweep } = await cutOffHold(store, 300, 300);
  await sweep();
  // The released funds were spent by another call before the settle could land.
  await holdFunds(store, { accountId, amountMicros: 250, ...call, instanceId: null });
  const outcome = await settlementsOn(store).end(settleOf(holdId, 120));
  assert.deepEqual(outcome, { applied: true, chargedMicros: 50, unbilledMicros: 70 });
  const check = await checkAccountBalance(store, accountId);
  assert.deepEqual({ balance: check.balanceMicros, held: check.heldMicros, consistent: check.consistent }, { balance: 0, held: 250, consistent: true });
  await store.close();
});

const baseUrl = await requirePostgresOrSkip('late settles on PostgreSQL');
const nextUrl = baseUrl ? freshSchemaUrls(baseUrl) : undefined;

test('on PostgreSQL, a settle that finds its hold released by the sweep is charged once', { skip: !baseUrl }, async () => {
  const store = await openStore(nextUrl!());
  const { accountId, holdId, sweep } = await cutOffHold(store, 1_000, 300);
  assert.deepEqual(await sweep(), { settled: 0, released: 1 });
  const settlements = settlementsOn(store);
  assert.equal((await settlements.end(settleOf(holdId, 120)))?.applied, true);
  assert.equal((await settlements.end(settleOf(holdId, 120)))?.applied, false);
  assert.deepEqual(await checkAccountBalance(store, accountId), {
    balanceMicros: 880,
    heldMicros: 0,
    ledgerBalanceMicros: 880,
    ledgerHeldMicros: 0,
    consistent: true,
  });
  await store.close();
});

/** A stream's hold the sweep settled from the 60 micros of progress it had recorded. */
async function sweptStream(store: Store) {
  const { accountId, holdId, sweep } = await cutOffHold(store, 1_000, 300);
  await recordProgress(store.db, [{ id: holdId, progress: JSON.stringify({ units: { output_token: 5 }, charge_micros: 60 }) }]);
  assert.deepEqual(await sweep(), { settled: 1, released: 0 });
  const usageOf = () => store.db.selectFrom('usage_all').select(['amount_micros', 'flags']).where('hold_id', '=', holdId).execute();
  return { accountId, holdId, usageOf };
}

for (const [name, open] of [
  ['SQLite', () => openStore('sqlite::memory:')],
  ['PostgreSQL', () => openStore(nextUrl!())],
] as const) {
  test(`on ${name}, a stream’s settle that lands after the sweep billed its recorded progress replaces that charge, once`, {
    skip: name === 'PostgreSQL' && !baseUrl,
  }, async () => {
    const store = await open();
    const { accountId, holdId, usageOf } = await sweptStream(store);
    const settlements = settlementsOn(store);
    assert.deepEqual(await settlements.end(settleOf(holdId, 150)), { applied: true, chargedMicros: 150, unbilledMicros: 0 });
    assert.equal((await settlements.end(settleOf(holdId, 150)))?.applied, false);
    assert.deepEqual(await usageOf(), [{ amount_micros: 150, flags: 'recovered,late' }]);
    assert.equal((await findHold(store.db, holdId))?.charged_micros, 150);
    assert.deepEqual(await checkAccountBalance(store, accountId), {
      balanceMicros: 850,
      heldMicros: 0,
      ledgerBalanceMicros: 850,
      ledgerHeldMicros: 0,
      consistent: true,
    });
    await store.close();
  });
}

test('a stream whose recorded progress came to more than its settle gets the difference back', async () => {
  const store = await openStore('sqlite::memory:');
  const { accountId, holdId } = await sweptStream(store);
  assert.equal((await settlementsOn(store).end(settleOf(holdId, 40)))?.applied, true);
  const check = await checkAccountBalance(store, accountId);
  assert.deepEqual({ balance: check.balanceMicros, consistent: check.consistent }, { balance: 960, consistent: true });
  await store.close();
});

test('a hold settled by its own call is not settled again', async () => {
  const store = await openStore('sqlite::memory:');
  const { accountId, holdId } = await cutOffHold(store, 1_000, 300);
  const settlements = settlementsOn(store);
  assert.equal((await settlements.end(settleOf(holdId, 100)))?.applied, true);
  assert.equal((await settlements.end(settleOf(holdId, 200)))?.applied, false);
  assert.equal((await checkAccountBalance(store, accountId)).balanceMicros, 900);
  await store.close();
});
