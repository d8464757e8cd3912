// An instance sweeps the holds of instances that stopped heartbeating, never its own: a late
// heartbeat of its own (a starved CPU, a long pause) is no death. Found by the kill loop, where a
// starved gateway released the hold of a call it then answered, and freed its Idempotency-Key.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createAccount } from '../../src/billing/accounts.js';
import { createInstance, leaseMs } from '../../src/billing/instance.js';
import { holdFunds } from '../../src/billing/ledger.js';
import { endOrphanedHolds } from '../../src/billing/recovery.js';
import { LEASE_EXPIRED, StoreHealth } from '../../src/store/health.js';
import { findHold } from '../../src/store/holds.js';
import { registerInstance } from '../../src/store/instances.js';
import { openStore } from '../../src/store/open.js';

const quiet = { info() {}, warn() {}, error() {} };
const call = { requestId: 'r', model: 'm', endpoint: 'e' };

test('an instance whose own heartbeat is late keeps its holds, and still ends a dead instance’s', async () => {
  const store = await openStore('sqlite::memory:');
  const account = await createAccount(store, { name: 'starved', creditMicros: 1_000 });
  let clock = 1_000_000;
  // Timers far off: no heartbeat lands during the test, as in a process that gets no CPU.
  const instance = createInstance({
    store,
    health: new StoreHealth(quiet),
    log: quiet,
    onStoreBack() {},
    now: () => clock,
    heartbeatMs: 3_600_000,
    deadAfterMs: 1_000,
    sweepMs: 3_600_000,
    legacyHoldAgeMs: 3_600_000,
  });
  await registerInstance(store.db, { id: 'inst_dead', now: clock - 60_000 });
  await instance.start();
  const own = await holdFunds(store, { accountId: account.id, amountMicros: 300, ...call, instanceId: instance.id });
  const orphan = await holdFunds(store, { accountId: account.id, amountMicros: 200, ...call, instanceId: 'inst_dead' });

  clock += 60_000; // a minute without a heartbeat of its own
  await instance.sweep();

  assert.deepEqual(
    { own: (await findHold(store.db, own.holdId))?.state, orphan: (await findHold(store.db, orphan.holdId))?.state },
    { own: 'open', orphan: 'released' },
  );
  await instance.stop();
  await store.close();
});

test('an instance whose heartbeats stop landing refuses new calls before another instance may take it for dead', async () => {
  const store = await openStore('sqlite::memory:');
  const account = await createAccount(store, { name: 'cut-off', creditMicros: 1_000 });
  let clock = 1_000_000;
  const health = new StoreHealth(quiet, () => clock);
  const deadAfterMs = 1_000;
  // No heartbeat lands after the registration, as on an instance cut off from the store.
  const instance = createInstance({
    store,
    health,
    log: quiet,
    onStoreBack() {},
    now: () => clock,
    heartbeatMs: 3_600_000,
    deadAfterMs,
    sweepMs: 3_600_000,
    legacyHoldAgeMs: 3_600_000,
  });
  await instance.start();
  const own = await holdFunds(store, { accountId: account.id, amountMicros: 300, ...call, instanceId: instance.id });
  const registeredAt = clock;

  clock = registeredAt + leaseMs(deadAfterMs) - 1;
  assert.equal(health.ok, true, 'within the lease');
  clock = registeredAt + leaseMs(deadAfterMs);
  assert.deepEqual({ ok: health.ok, problem: health.problem?.code }, { ok: false, problem: LEASE_EXPIRED });
  // Another instance's sweep at this instant does not yet take it for dead.
  await endOrphanedHolds(store, { heartbeatBefore: clock - deadAfterMs, legacyCreatedBefore: 0, log: quiet });
  assert.equal((await findHold(store.db, own.holdId))?.state, 'open');
  await instance.stop();
  await store.close();
});
