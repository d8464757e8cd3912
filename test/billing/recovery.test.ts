// Holds left open by a crashed instance are released once no request can still own them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkAccountBalance, createAccount, holdFunds } from '../../src/billing/ledger.js';
import { releaseStaleHolds } from '../../src/billing/recovery.js';
import { openStore } from '../../src/store/open.js';

const quiet = { info() {}, error() {} };

test('an open hold older than the request timeout is released and the ledger stays whole', async () => {
  const store = await openStore('sqlite::memory:');
  const account = await createAccount(store, { name: 'crashed', creditMicros: 1_000 });
  const now = Date.now();
  await holdFunds(store, { accountId: account.id, amountMicros: 300, requestId: 'r-old', model: 'm', endpoint: 'e', now: now - 120_000 });
  await holdFunds(store, { accountId: account.id, amountMicros: 200, requestId: 'r-live', model: 'm', endpoint: 'e', now });

  assert.equal(await releaseStaleHolds(store, { olderThanMs: 60_000, log: quiet, now }), 1);
  const check = await checkAccountBalance(store, account.id);
  assert.deepEqual(check, { balanceMicros: 800, heldMicros: 200, ledgerBalanceMicros: 800, ledgerHeldMicros: 200, consistent: true });
  assert.equal(await releaseStaleHolds(store, { olderThanMs: 60_000, log: quiet, now }), 0, 'a second sweep finds nothing');
  await store.close();
});
