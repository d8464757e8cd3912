// Holds whose instance died are ended from what the call recorded: delivered output billed, the
// rest released; the dead instance's running Idempotency-Keys become retryable.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkAccountBalance, createAccount } from '../../src/billing/accounts.js';
import { holdFunds, settleHold } from '../../src/billing/ledger.js';
import { endOrphanedHolds } from '../../src/billing/recovery.js';
import { findHold, recordProgress } from '../../src/store/holds.js';
import { beginIdempotent, LOST_ANSWER } from '../../src/store/idempotency.js';
import { registerInstance } from '../../src/store/instances.js';
import { openStore } from '../../src/store/open.js';

const quiet = { info() {}, error() {} };
const call = { requestId: 'r', model: 'm', endpoint: 'e' };

test('a dead instance’s stream hold is billed what it recorded as delivered, and its other hold released', async () => {
  const store = await openStore('sqlite::memory:');
  const account = await createAccount(store, { name: 'crashed', creditMicros: 1_000 });
  const now = Date.now();
  await registerInstance(store.db, { id: 'inst_dead', now: now - 60_000 });
  const streamed = await holdFunds(store, { accountId: account.id, amountMicros: 300, ...call, instanceId: 'inst_dead' });
  const silent = await holdFunds(store, { accountId: account.id, amountMicros: 200, ...call, instanceId: 'inst_dead' });
  await recordProgress(store.db, [{ id: streamed.holdId, progress: JSON.stringify({ units: { input_token: 10, output_token: 5 }, charge_micros: 60 }) }]);

  assert.deepEqual(await endOrphanedHolds(store, { heartbeatBefore: now - 20_000, legacyCreatedBefore: 0, log: quiet }), { settled: 1, released: 1 });
  assert.equal((await findHold(store.db, streamed.holdId))?.charged_micros, 60);
  assert.equal((await findHold(store.db, silent.holdId))?.state, 'released');
  const check = await checkAccountBalance(store, account.id);
  assert.deepEqual(check, { balanceMicros: 940, heldMicros: 0, ledgerBalanceMicros: 940, ledgerHeldMicros: 0, consistent: true });
  assert.deepEqual(
    await endOrphanedHolds(store, { heartbeatBefore: now - 20_000, legacyCreatedBefore: 0, log: quiet }),
    { settled: 0, released: 0 },
    'a second sweep finds nothing',
  );
  await store.close();
});

test('a recovered charge is counted in the billed total, as every charge is', async () => {
  const store = await openStore('sqlite::memory:');
  const account = await createAccount(store, { name: 'counted', creditMicros: 1_000 });
  const now = Date.now();
  await registerInstance(store.db, { id: 'inst_dead', now: now - 60_000 });
  const streamed = await holdFunds(store, { accountId: account.id, amountMicros: 300, ...call, instanceId: 'inst_dead' });
  await holdFunds(store, { accountId: account.id, amountMicros: 200, ...call, instanceId: 'inst_dead' });
  await recordProgress(store.db, [{ id: streamed.holdId, progress: JSON.stringify({ units: { output_token: 5 }, charge_micros: 60 }) }]);
  const billed: [string, number][] = [];
  const metrics = { addBilled: (model: string, micros: number) => billed.push([model, micros]), addUnbilled() {} };
  await endOrphanedHolds(store, { heartbeatBefore: now - 20_000, legacyCreatedBefore: 0, log: quiet, metrics });
  assert.deepEqual(billed, [['m', 60]]);
  await store.close();
});

test('a live instance’s holds are left alone', async () => {
  const store = await openStore('sqlite::memory:');
  const account = await createAccount(store, { name: 'alive', creditMicros: 1_000 });
  const now = Date.now();
  await registerInstance(store.db, { id: 'inst_live', now });
  await holdFunds(store, { accountId: account.id, amountMicros: 300, ...call, instanceId: 'inst_live' });
  assert.deepEqual(await endOrphanedHolds(store, { heartbeatBefore: now - 20_000, legacyCreatedBefore: 0, log: quiet }), { settled: 0, released: 0 });
  assert.equal((await checkAccountBalance(store, account.id)).heldMicros, 300);
  await store.close();
});

test('a running Idempotency-Key of a dead instance becomes retryable', async () => {
  const store = await openStore('sqlite::memory:');
  const account = await createAccount(store, { name: 'retry', creditMicros: 1_000 });
  const now = Date.now();
  await registerInstance(store.db, { id: 'inst_dead', now: now - 60_000 });
  const key = { accountId: account.id, key: 'k1', bodyHash: 'h' };
  assert.deepEqual(await beginIdempotent(store.db, { ...key, now: now - 30_000, instanceId: 'inst_dead' }), { kind: 'started' });
  assert.deepEqual(await beginIdempotent(store.db, { ...key, now }), { kind: 'running' });
  await endOrphanedHolds(store, { heartbeatBefore: now - 20_000, legacyCreatedBefore: 0, log: quiet });
  assert.deepEqual(await beginIdempotent(store.db, { ...key, now }), { kind: 'started' });
  await store.close();
});

test('a dead instance’s Idempotency-Key whose call was already billed replays that it was, and is never charged again', async () => {
  const store = await openStore('sqlite::memory:');
  const account = await createAccount(store, { name: 'billed', creditMicros: 1_000 });
  const now = Date.now();
  await registerInstance(store.db, { id: 'inst_dead', now: now - 60_000 });
  const key = { accountId: account.id, key: 'k2', bodyHash: 'h' };
  await beginIdempotent(store.db, { ...key, now: now - 30_000, instanceId: 'inst_dead', requestId: 'req_billed' });
  const { holdId } = await holdFunds(store, {
    accountId: account.id,
    amountMicros: 100,
    requestId: 'req_billed',
    model: 'm',
    endpoint: 'e',
    instanceId: 'inst_dead',
  });
  await settleHold(store, holdId, { chargeMicros: 74, units: { call: 1 } });
  await endOrphanedHolds(store, { heartbeatBefore: now - 20_000, legacyCreatedBefore: 0, log: quiet });
  assert.deepEqual(await beginIdempotent(store.db, { ...key, now }), {
    kind: 'replay',
    statusCode: 500,
    body: JSON.stringify({ error: LOST_ANSWER, type: 'server_error' }),
  });
  assert.equal((await checkAccountBalance(store, account.id)).balanceMicros, 1_000 - 74);
  await store.close();
});
