// Ids issued before ids became letters and digits only (base64url, `-` and `_` among them) keep
// working everywhere an id is taken: the admin API, keys, calls, usage and the ledger.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { newWebhookSecret } from '../../src/billing/accounts.js';
import { insertAccount } from '../../src/store/accounts.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const OLD_ID = 'acct_-P7WXa_b-Qz3kLm9_x2YwZ';
let gw: TestGateway;

before(async () => {
  gw = await startTestGateway();
  await insertAccount(gw.gateway.store.db, {
    id: OLD_ID,
    name: 'issued-before',
    balance_micros: 0,
    held_micros: 0,
    webhook_secret: newWebhookSecret(),
    created_at: Date.now() - 86_400_000,
    overdraft_micros: 0,
  });
});
after(() => gw.close());

test('an account with an old-shape id is read, credited and given a key through the admin API', async () => {
  assert.equal((await gw.admin('GET', `/admin/accounts/${OLD_ID}`)).body.id, OLD_ID);
  const credited = await gw.admin('POST', `/admin/accounts/${OLD_ID}/credit`, { amount_micros: 1_000_000 });
  assert.deepEqual([credited.status, credited.body.balance_micros], [200, 1_000_000]);
  const issued = await gw.admin('POST', `/admin/accounts/${OLD_ID}/keys`, { name: 'old' });
  assert.equal(issued.status, 201);
});

test("its key's calls are served and billed to it, and listed in its usage and ledger", async () => {
  const { body: issued } = await gw.admin('POST', `/admin/accounts/${OLD_ID}/keys`, {});
  const answer = await gw.call(issued.key, 'POST', '/v1/chat/completions', { model: 'sandbox-chat', messages: [{ role: 'user', content: 'hi' }] });
  assert.equal(answer.status, 200);
  assert.equal((await gw.call(issued.key, 'GET', '/v1/account')).body.id, OLD_ID);
  const settled = await gw.settled(OLD_ID);
  assert.ok(settled.balance_micros < 1_000_000 && settled.held_micros === 0, JSON.stringify(settled));
  const usage = await gw.admin('GET', `/admin/accounts/${OLD_ID}/usage`);
  assert.equal(usage.body.data.length, 1);
  const ledger = await gw.admin('GET', `/admin/accounts/${OLD_ID}/ledger`);
  assert.deepEqual(
    ledger.body.data.map((row: { kind: string }) => row.kind),
    ['settle', 'hold', 'credit'],
  );
});
