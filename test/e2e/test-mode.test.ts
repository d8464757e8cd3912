// Test mode end to end (docs/api.md "Test mode"): tr-test- keys are served by the sandbox alone, on a
// test balance of their own, whatever model they name; live keys never reach the sandbox once
// real channels are configured. The live channel here is a second sandbox, so what reached it is
// seen in its request log.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { checkAccountBalance } from '../../src/billing/accounts.js';
import { priceMicros } from '../../src/billing/prices.js';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.js';
import { findTestTwin } from '../../src/store/accounts.js';
import { eventually, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { type Receiver, startReceiver } from '../helpers/receiver.js';

const CHAT_PRICE = { input_token: 3_000_000, output_token: 9_000_000 };
const IMAGE_PRICE = { image: 70_000 };
const chat = (model: string) => ({ model, messages: [{ role: 'user', content: 'hello there' }] });

describe('test mode', () => {
  let live: Sandbox; // the "real" upstream of the live channel
  let gw: TestGateway;
  let receiver: Receiver;

  before(async () => {
    live = await startSandbox({ port: 0, taskMs: 50 });
    gw = await startTestGateway((sandboxUrl) => ({
      channels: { real: { kind: 'openai', base_url: live.url, api_key: 'sk-live-channel' } },
      models: {
        'gpt-live': { type: 'chat', channel: 'real', price: CHAT_PRICE },
        'image-live': { type: 'image', channel: 'real', price: IMAGE_PRICE },
      },
      test_mode: { sandbox_url: sandboxUrl },
    }));
    receiver = await startReceiver();
  });
  after(async () => {
    await gw.close();
    await live.close();
    await receiver.close();
  });
  beforeEach(async () => {
    await gw.sandboxControl('DELETE', '/__sandbox/requests');
    await gw.sandboxControl('DELETE', '/__sandbox/faults');
    await fetch(`${live.url}/__sandbox/requests`, { method: 'DELETE' });
  });

  const liveRequests = async () => ((await (await fetch(`${live.url}/__sandbox/requests`)).json()) as { data: any[] }).data;
  const sandboxRequests = async () => (await gw.sandboxControl('GET', '/__sandbox/requests')).data as any[];

  /** A live account with live funds, a live key, a test key and test funds. */
  async function accountWithTestKey({ live: liveMicros = 5_000_000, test = 2_000_000 } = {}) {
    const { accountId, key } = await gw.account({ creditMicros: liveMicros });
    const issued = await gw.admin('POST', `/admin/accounts/${accountId}/test-keys`, { name: 'ci' });
    assert.equal(issued.status, 201);
    if (test > 0) assert.equal((await gw.admin('POST', `/admin/accounts/${accountId}/test-credit`, { amount_micros: test })).status, 200);
    return { accountId, key, testKey: issued.body.key as string, testKeyId: issued.body.id as string };
  }

  test('a test key naming a live model is served by the sandbox, and the live channel gets no request', async () => {
    const { testKey } = await accountWithTestKey();
    const res = await gw.call(testKey, 'POST', '/v1/chat/completions', chat('gpt-live'));
    assert.equal(res.status, 200);
    assert.equal(res.body.object, 'chat.completion');
    const [sent] = await sandboxRequests();
    assert.deepEqual([sent.path, sent.body.model, sent.headers.authorization], ['/v1/chat/completions', 'sandbox-chat', 'Bearer sk-sandbox']);
    assert.deepEqual(await liveRequests(), []);
  });

  test('a test key may name the sandbox’s own models too; a live key may not, once real channels are configured', async () => {
    const { key, testKey } = await accountWithTestKey();
    assert.equal((await gw.call(testKey, 'POST', '/v1/chat/completions', chat('sandbox-chat'))).status, 200);
    const refused = await gw.call(key, 'POST', '/v1/chat/completions', chat('sandbox-chat'));
    assert.deepEqual(refused, { status: 400, body: { error: 'unknown model: sandbox-chat', type: 'invalid_request_error' } });
    assert.equal((await sandboxRequests()).length, 1, 'only the test key’s call reached the sandbox');
  });

  test('a live key’s call goes to the live channel and never to the sandbox', async () => {
    const { key } = await accountWithTestKey();
    assert.equal((await gw.call(key, 'POST', '/v1/chat/completions', chat('gpt-live'))).status, 200);
    const [sent] = await liveRequests();
    assert.deepEqual([sent.body.model, sent.headers.authorization], ['gpt-live', 'Bearer sk-live-channel']);
    assert.deepEqual(await sandboxRequests(), []);
  });

  test('a test call is charged on the test balance at the live model’s price, to the micro; the live balance is untouched', async () => {
    const { accountId, key, testKey } = await accountWithTestKey({ live: 5_000_000, test: 2_000_000 });
    const res = await gw.call(testKey, 'POST', '/v1/chat/completions', chat('gpt-live'));
    const units = { input_token: res.body.usage.prompt_tokens, output_token: res.body.usage.completion_tokens };
    const charge = priceMicros(units, CHAT_PRICE);
    assert.ok(charge > 0);
    const account = await eventually(async () => {
      const seen = (await gw.admin('GET', `/admin/accounts/${accountId}`)).body;
      return seen.test_held_micros === 0 && seen;
    });
    assert.deepEqual(
      [account.balance_micros, account.held_micros, account.test_balance_micros, account.test_held_micros],
      [5_000_000, 0, 2_000_000 - charge, 0],
    );
    // The test key's own account API shows the test twin: its balance and its usage.
    const own = await gw.call(testKey, 'GET', '/v1/account');
    assert.deepEqual([own.body.balance_micros, own.body.name], [2_000_000 - charge, 'test (test)']);
    const usage = (await gw.call(testKey, 'GET', '/v1/account/usage')).body.data;
    assert.deepEqual(
      usage.map((row: any) => [row.model, row.amount_micros, row.livemode, row.channel]),
      [['gpt-live', charge, false, 'test:sandbox-openai']],
    );
    assert.deepEqual((await gw.call(key, 'GET', '/v1/account/usage')).body.data, [], 'the live account has no usage');
    const twin = (await findTestTwin(gw.gateway.store.db, accountId))!;
    assert.equal((await checkAccountBalance(gw.gateway.store, twin.id)).consistent, true);
    assert.equal((await checkAccountBalance(gw.gateway.store, accountId)).consistent, true);
  });

  test('a live call’s usage row says livemode true, on the account API and the admin API', async () => {
    const { accountId, key } = await accountWithTestKey();
    await gw.call(key, 'POST', '/v1/chat/completions', chat('gpt-live'));
    await gw.settled(accountId);
    assert.deepEqual(
      (await gw.call(key, 'GET', '/v1/account/usage')).body.data.map((row: any) => row.livemode),
      [true],
    );
    assert.deepEqual(
      (await gw.admin('GET', `/admin/accounts/${accountId}/usage`)).body.data.map((row: any) => row.livemode),
      [true],
    );
  });

  test('a test key’s image task runs on the sandbox, and its webhook, signed with the test secret, says livemode false', async () => {
    const { accountId, testKey } = await accountWithTestKey({ test: 1_000_000 });
    receiver.secret = (await gw.call(testKey, 'GET', '/v1/account/webhook-secret')).body.secret;
    const created = await gw.call(testKey, 'POST', '/v1/images/async', { model: 'image-live', prompt: 'a toll gate', callback_url: receiver.url });
    assert.equal(created.status, 200);
    const delivery = await eventually(() => receiver.deliveries.find((d) => d.payload.task_id === created.body.id));
    assert.deepEqual([delivery.verified, delivery.payload.status, delivery.payload.livemode], [true, 'succeeded', false]);
    assert.ok((await sandboxRequests()).some((r) => r.path === '/v1/images/generations' && r.body.model === 'sandbox-image'));
    assert.deepEqual(await liveRequests(), []);
    const account = (await gw.admin('GET', `/admin/accounts/${accountId}`)).body;
    assert.deepEqual([account.balance_micros, account.test_balance_micros], [5_000_000, 1_000_000 - IMAGE_PRICE.image]);
    const tasks = (await gw.call(testKey, 'GET', '/v1/account/tasks')).body.data;
    assert.deepEqual(
      tasks.map((task: any) => [task.id, task.livemode]),
      [[created.body.id, false]],
    );
  });

  test('a live key’s image task goes to the live channel, and its webhook says livemode true', async () => {
    const { accountId, key } = await accountWithTestKey();
    receiver.secret = (await gw.admin('GET', `/admin/accounts/${accountId}/webhook-secret`)).body.secret;
    const created = await gw.call(key, 'POST', '/v1/images/async', { model: 'image-live', prompt: 'live', callback_url: receiver.url });
    const delivery = await eventually(() => receiver.deliveries.find((d) => d.payload.task_id === created.body.id));
    assert.deepEqual([delivery.verified, delivery.payload.livemode], [true, true]);
    assert.deepEqual(await sandboxRequests(), []);
    assert.ok((await liveRequests()).length > 0);
  });

  test('the sandbox’s faults reach test calls as they would live ones: a failed test task refunds the test balance', async () => {
    const { accountId, testKey } = await accountWithTestKey({ test: 1_000_000 });
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'images', task_outcome: 'failed', times: 1 });
    const created = await gw.call(testKey, 'POST', '/v1/images/async', { model: 'image-live', prompt: 'forbidden' });
    const done = await eventually(async () => {
      const { body } = await gw.call(testKey, 'GET', `/v1/images/async/${created.body.id}`);
      return body.status === 'failed' && body;
    });
    assert.match(done.error, /safety system/);
    const account = (await gw.admin('GET', `/admin/accounts/${accountId}`)).body;
    assert.deepEqual([account.test_balance_micros, account.test_held_micros], [1_000_000, 0]);
  });

  test('test funds are topped up freely over the admin API, and test keys show as tr-test-', async () => {
    const { accountId } = await gw.account({ creditMicros: 0 });
    assert.deepEqual([(await gw.admin('GET', `/admin/accounts/${accountId}`)).body.test_balance_micros], [0], 'no twin yet: a test balance of 0');
    const topped = await gw.admin('POST', `/admin/accounts/${accountId}/test-credit`, { amount_micros: 123_456, note: 'ci' });
    assert.deepEqual([topped.status, topped.body.balance_micros, topped.body.test_balance_micros], [200, 0, 123_456]);
    const again = await gw.admin('POST', `/admin/accounts/${accountId}/test-credit`, { amount_micros: 1 });
    assert.equal(again.body.test_balance_micros, 123_457);
    const issued = await gw.admin('POST', `/admin/accounts/${accountId}/test-keys`, {});
    assert.match(issued.body.key, /^tr-test-/);
    assert.match(issued.body.prefix, /^tr-test-.{6}$/);
    assert.equal((await gw.admin('POST', '/admin/accounts/acct_nope/test-credit', { amount_micros: 1 })).status, 404);
  });

  test('a sign-in link is for a live account: one asked for a test twin is refused', async () => {
    const { accountId } = await accountWithTestKey({ live: 0, test: 1 });
    const twin = await gw.gateway.store.db.selectFrom('accounts').select('id').where('live_account_id', '=', accountId).executeTakeFirstOrThrow();
    const refused = await gw.admin('POST', `/admin/accounts/${twin.id}/login-links`);
    assert.equal(refused.status, 400);
    assert.match(refused.body.error, /is a test account; issue the link for its live account/);
  });

  test('a test key cannot spend more test money than it has: 402, and the live balance does not pay', async () => {
    const { accountId, testKey } = await accountWithTestKey({ live: 5_000_000, test: 0 });
    const res = await gw.call(testKey, 'POST', '/v1/chat/completions', chat('gpt-live'));
    assert.equal(res.status, 402);
    assert.equal((await gw.balance(accountId)).balance_micros, 5_000_000);
    assert.deepEqual(await sandboxRequests(), []);
  });
});

describe('test mode without a sandbox', () => {
  let gw: TestGateway;
  before(async () => {
    // A live channel, no test_mode and no embedded sandbox: test keys have nowhere to go.
    gw = await startTestGateway((sandboxUrl) => ({
      channels: { real: { kind: 'openai', base_url: sandboxUrl, api_key: 'sk-live-channel' } },
      models: { 'gpt-live': { type: 'chat', channel: 'real', price: CHAT_PRICE } },
    }));
  });
  after(() => gw.close());

  test('a test key’s call is refused with 503, nothing held, and no upstream asked', async () => {
    const { accountId } = await gw.account();
    const testKey = (await gw.admin('POST', `/admin/accounts/${accountId}/test-keys`, {})).body.key;
    await gw.admin('POST', `/admin/accounts/${accountId}/test-credit`, { amount_micros: 1_000_000 });
    await gw.sandboxControl('DELETE', '/__sandbox/requests');
    const res = await gw.call(testKey, 'POST', '/v1/chat/completions', chat('gpt-live'));
    assert.equal(res.status, 503);
    assert.equal(res.body.error, 'test mode is not available on this gateway');
    const task = await gw.call(testKey, 'POST', '/v1/images/async', { model: 'sandbox-image', prompt: 'x' });
    assert.equal(task.status, 503);
    const account = (await gw.admin('GET', `/admin/accounts/${accountId}`)).body;
    assert.deepEqual([account.test_balance_micros, account.test_held_micros], [1_000_000, 0]);
    const twin = (await findTestTwin(gw.gateway.store.db, accountId))!;
    const ledger = (await gw.admin('GET', `/admin/accounts/${twin.id}/ledger`)).body.data;
    assert.deepEqual(
      ledger.map((row: any) => row.kind),
      ['credit'],
    );
    assert.deepEqual((await gw.sandboxControl('GET', '/__sandbox/requests')).data, []);
  });
});
