// A batch line's internal credential: the process's secret and the batch id, or nothing.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createBatchLineAuth } from '../../src/batches/line-auth.js';
import { createAccount } from '../../src/billing/accounts.js';
import { issueApiKey } from '../../src/billing/api-keys.js';
import { insertBatch } from '../../src/store/batches.js';
import { openStore, type Store } from '../../src/store/open.js';

describe('batch line authentication', () => {
  let store: Store;
  let keyId: string;
  before(async () => {
    store = await openStore('sqlite::memory:');
    const account = await createAccount(store, { name: 'lines', creditMicros: 1_000 });
    const issued = await issueApiKey(store, { accountId: account.id, rpm: 7 });
    keyId = issued.row.id;
    const now = Date.now();
    await insertBatch(
      store.db,
      {
        id: 'batch_auth',
        account_id: account.id,
        key_id: keyId,
        livemode: 1,
        endpoint: '/v1/chat/completions',
        input_file_id: 'file_x',
        completion_window: '24h',
        status: 'in_progress',
        metadata: null,
        callback_url: null,
        output_file_id: null,
        error_file_id: null,
        created_at: now,
        in_progress_at: now,
        expires_at: now + 1_000,
        finalizing_at: null,
        completed_at: null,
        expired_at: null,
        cancelling_at: null,
        cancelled_at: null,
        lease_owner: null,
        lease_until: null,
      },
      [],
    );
  });
  after(() => store.close());

  test('its own credential resolves to the key that created the batch', async () => {
    const auth = createBatchLineAuth(store);
    const caller = await auth.resolve(auth.credential('batch_auth'));
    assert.equal(caller?.keyId, keyId);
    assert.equal(caller?.rpm, 7);
    assert.equal(caller?.livemode, true);
  });

  test('another process’s secret is refused', async () => {
    const mine = createBatchLineAuth(store);
    const theirs = createBatchLineAuth(store);
    assert.equal(await mine.resolve(theirs.credential('batch_auth')), undefined);
  });

  test('an unknown batch and a credential without a secret are refused', async () => {
    const auth = createBatchLineAuth(store);
    assert.equal(await auth.resolve(auth.credential('batch_other')), undefined);
    assert.equal(await auth.resolve('batch_auth'), undefined);
    assert.equal(await auth.resolve('.'), undefined);
  });
});
