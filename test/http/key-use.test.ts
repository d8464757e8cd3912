// When keys were last used: noted in memory on every authentication, written in batches, never
// one write per call, and never lost to a store that refused a write for a moment.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createAccount } from '../../src/billing/accounts.js';
import { issueApiKey } from '../../src/billing/api-keys.js';
import { createKeyUseRecorder } from '../../src/http/key-use.js';
import { listAccountKeys } from '../../src/store/api-keys.js';
import { openStore } from '../../src/store/open.js';

async function fixture(t: import('node:test').TestContext) {
  const store = await openStore('sqlite::memory:');
  t.after(() => store.close());
  const account = await createAccount(store, { name: 'a', creditMicros: 0 });
  const { row: first } = await issueApiKey(store, { accountId: account.id, now: 1 });
  const { row: second } = await issueApiKey(store, { accountId: account.id, now: 2 });
  let clock = 1_000;
  const recorder = createKeyUseRecorder(store, { flushEveryMs: 60_000, now: () => clock });
  t.after(() => recorder.stop());
  const lastUsed = async () => Object.fromEntries((await listAccountKeys(store.db, { accountId: account.id })).map((key) => [key.id, key.last_used_at]));
  return { store, recorder, first, second, lastUsed, tick: (ms: number) => (clock += ms) };
}

test('a use is noted in memory only, and written with the latest time per key at the flush', async (t) => {
  const { recorder, first, second, lastUsed, tick } = await fixture(t);
  recorder.used(first.id);
  tick(5);
  recorder.used(first.id);
  recorder.used(second.id);
  assert.deepEqual(await lastUsed(), { [first.id]: null, [second.id]: null }, 'nothing written before the flush');
  await recorder.flush();
  assert.deepEqual(await lastUsed(), { [first.id]: 1_005, [second.id]: 1_005 });
});

test('a flush the store refuses keeps its notes for the next flush', async (t) => {
  const { store, recorder, first, lastUsed } = await fixture(t);
  recorder.used(first.id);
  store.failWrites?.('SQLITE_FULL');
  await recorder.flush();
  store.failWrites?.(null);
  assert.equal((await lastUsed())[first.id], null);
  await recorder.flush();
  assert.equal((await lastUsed())[first.id], 1_000);
});

test('stopping writes the notes still in memory', async (t) => {
  const { recorder, second, lastUsed } = await fixture(t);
  recorder.used(second.id);
  await recorder.stop();
  assert.equal((await lastUsed())[second.id], 1_000);
});
