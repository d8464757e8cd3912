// The money rules run against real stores in test/store/*.test.ts (one contract, both
// backends); this file covers what is particular to issuing keys.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, test } from 'node:test';
import { createAccount } from '../../src/billing/accounts.js';
import { hashApiKey, issueApiKey } from '../../src/billing/api-keys.js';
import { openStore } from '../../src/store/open.js';

const store = await openStore('sqlite::memory:');
after(() => store.close());

test('a key hashes to the sha256 hex of its whole text', () => {
  assert.equal(hashApiKey('tr-abc'), createHash('sha256').update('tr-abc').digest('hex'));
});

test('issued keys are tr- and 32 random bytes, shown by a short head only', async () => {
  const { id: accountId } = await createAccount(store, { name: 'acme' });
  const issued = await Promise.all([issueApiKey(store, { accountId }), issueApiKey(store, { accountId })]);
  for (const { key, row } of issued) {
    assert.match(key, /^tr-[A-Za-z0-9_-]{43}$/); // gateway spec §5: keys carry the prefix tr-
    assert.ok(key.startsWith(row.prefix) && row.prefix.length <= 12, `prefix ${row.prefix}`);
    assert.equal(row.key_hash, hashApiKey(key));
  }
  assert.notEqual(issued[0]?.key, issued[1]?.key);
});
