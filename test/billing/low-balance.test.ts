// Low-balance notices on a live gateway: an account's funds crossing below its threshold send one
// signed account.balance_low event per crossing to its webhook_url; a credit back ends the crossing,
// so the next one is told again; the operator lists the accounts below their threshold.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { noticeLowBalances } from '../../src/billing/low-balance.js';
import { listWebhooksForTask } from '../../src/store/webhook-outbox.js';
import { verifyWebhook } from '../../src/webhooks/verify.js';
import { eventually, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { type Receiver, startReceiver } from '../helpers/receiver.js';

describe('low-balance notices', () => {
  let gw: TestGateway;
  let receiver: Receiver;
  before(async () => {
    gw = await startTestGateway({ low_balance: { sweep_ms: 50 }, webhooks: { retry_delays_ms: [50], timeout_ms: 2_000 } });
    receiver = await startReceiver();
  });
  after(async () => {
    await gw.close();
    await receiver.close();
  });

  const eventsOf = (accountId: string) =>
    receiver.deliveries.filter((d) => d.payload.type === 'account.balance_low' && d.payload.data.account_id === accountId);
  /** The account's queued account events, delivered or not: what a crossing wrote, whatever the receiver has seen. */
  const queuedFor = async (accountId: string) => listWebhooksForTask(gw.gateway.store.db, accountId);

  const funds = async (accountId: string) => {
    const { balance_micros, held_micros } = await gw.settled(accountId);
    return balance_micros + held_micros;
  };
  const spend = async (key: string) => {
    const answer = await gw.call(key, 'POST', '/v1/chat/completions', { model: 'sandbox-chat', messages: [{ role: 'user', content: 'spend a little' }] });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
  };

  /** An account whose next paid call crosses its threshold: set one micro under its funds, events to the receiver. */
  const accountAtThreshold = async () => {
    const account = await gw.account({ creditMicros: 10_000_000 });
    const threshold = (await funds(account.accountId)) - 1;
    const set = await gw.call(account.key, 'PATCH', '/v1/account/settings', { low_balance_micros: threshold, webhook_url: receiver.url });
    assert.equal(set.status, 200, JSON.stringify(set.body));
    const secret = (await gw.admin('GET', `/admin/accounts/${account.accountId}/webhook-secret`)).body.secret as string;
    return { ...account, threshold, secret };
  };

  test('spending across the threshold sends one account.balance_low event, signed with the account’s webhook secret', async () => {
    const { accountId, key, threshold, secret } = await accountAtThreshold();
    assert.equal(eventsOf(accountId).length, 0, 'nothing before the crossing');
    await spend(key);
    const [event] = await eventually(() => eventsOf(accountId).length > 0 && eventsOf(accountId), 10_000);
    assert.equal(verifyWebhook(secret, event!.headers, event!.rawBody), true);
    assert.equal(event!.headers['x-service-event-id'], event!.payload.event_id);
    const { balance_micros, held_micros } = await gw.settled(accountId);
    assert.deepEqual(event!.payload.data, { account_id: accountId, balance_micros, held_micros, threshold_micros: threshold });
    assert.equal(event!.payload.livemode, true);
    assert.equal((await queuedFor(accountId)).length, 1);
  });

  test('more spending while below the threshold sends no second event', async () => {
    const { accountId, key } = await accountAtThreshold();
    await spend(key);
    await eventually(() => eventsOf(accountId).length === 1, 10_000);
    await spend(key);
    await gw.settled(accountId);
    // A sweep of its own, besides the gateway's: the account is still below and already told.
    await noticeLowBalances(gw.gateway.store);
    assert.equal((await queuedFor(accountId)).length, 1);
    assert.equal(eventsOf(accountId).length, 1);
  });

  test('a credit back to the threshold and a new crossing send a second event', async () => {
    const { accountId, key, threshold } = await accountAtThreshold();
    await spend(key);
    await eventually(() => eventsOf(accountId).length === 1, 10_000);
    const credited = await gw.admin('POST', `/admin/accounts/${accountId}/credit`, { amount_micros: threshold - (await funds(accountId)) });
    assert.equal(credited.status, 200, JSON.stringify(credited.body));
    assert.equal((await gw.call(key, 'GET', '/v1/account')).body.balance_low, false, 'at the threshold is not below it');
    await spend(key);
    const events = await eventually(() => eventsOf(accountId).length === 2 && eventsOf(accountId), 10_000);
    assert.notEqual(events[0]!.payload.event_id, events[1]!.payload.event_id);
  });

  test('a threshold set above the funds is a crossing, queued before the answer', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 3_000_000 });
    const set = await gw.call(key, 'PATCH', '/v1/account/settings', { low_balance_micros: 5_000_000, webhook_url: receiver.url });
    assert.equal(set.status, 200, JSON.stringify(set.body));
    assert.equal(set.body.balance_low, true);
    assert.notEqual(set.body.low_balance_since, null);
    assert.equal((await queuedFor(accountId)).length, 1);
  });

  test('a threshold set at the funds is no crossing', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 3_000_000 });
    const set = await gw.call(key, 'PATCH', '/v1/account/settings', { low_balance_micros: 3_000_000, webhook_url: receiver.url });
    assert.equal(set.body.balance_low, false);
    await noticeLowBalances(gw.gateway.store);
    assert.equal((await queuedFor(accountId)).length, 0);
  });

  test('GET /v1/account shows the threshold and whether the funds are below it', async () => {
    const { key } = await gw.account({ creditMicros: 3_000_000 });
    assert.deepEqual(pick(await gw.call(key, 'GET', '/v1/account')), { low_balance_micros: null, balance_low: false });
    await gw.call(key, 'PATCH', '/v1/account/settings', { low_balance_micros: 4_000_000 });
    assert.deepEqual(pick(await gw.call(key, 'GET', '/v1/account')), { low_balance_micros: 4_000_000, balance_low: true });
  });

  test('the operator’s list shows an account while it is below its threshold, and not after a credit', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 3_000_000 });
    await gw.call(key, 'PATCH', '/v1/account/settings', { low_balance_micros: 4_000_000 });
    const listed = async () => ((await gw.admin('GET', '/admin/accounts/low-balance?limit=500')).body.data as { id: string }[]).find((a) => a.id === accountId);
    assert.deepEqual(
      { ...(await listed()), low_balance_since: undefined },
      {
        id: accountId,
        name: 'test',
        balance_micros: 3_000_000,
        held_micros: 0,
        low_balance_micros: 4_000_000,
        balance_low: true,
        low_balance_since: undefined,
      },
    );
    await gw.admin('POST', `/admin/accounts/${accountId}/credit`, { amount_micros: 1_000_000 });
    assert.equal(await listed(), undefined);
  });

  test('the operator’s threshold works as the holder’s: one above the funds sends the event', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 3_000_000 });
    await gw.call(key, 'PATCH', '/v1/account/settings', { webhook_url: receiver.url });
    const set = await gw.admin('PATCH', `/admin/accounts/${accountId}`, { low_balance_micros: 5_000_000 });
    assert.equal(set.status, 200, JSON.stringify(set.body));
    assert.equal(set.body.balance_low, true);
    await eventually(() => eventsOf(accountId).length === 1, 10_000);
  });

  test('turning the threshold off ends the crossing, and one set again is told afresh', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 3_000_000 });
    await gw.call(key, 'PATCH', '/v1/account/settings', { low_balance_micros: 5_000_000, webhook_url: receiver.url });
    const off = await gw.call(key, 'PATCH', '/v1/account/settings', { low_balance_micros: null });
    assert.deepEqual(
      { ...off.body, webhook_url: undefined },
      { low_balance_micros: null, webhook_url: undefined, balance_low: false, low_balance_since: null },
    );
    await gw.call(key, 'PATCH', '/v1/account/settings', { low_balance_micros: 5_000_000 });
    assert.equal((await queuedFor(accountId)).length, 2);
  });

  test('a crossing without a webhook_url is marked and sends nothing', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 3_000_000 });
    const set = await gw.call(key, 'PATCH', '/v1/account/settings', { low_balance_micros: 5_000_000 });
    assert.notEqual(set.body.low_balance_since, null);
    assert.equal((await queuedFor(accountId)).length, 0);
  });

  test('sweeps replayed and run at once tell one crossing once', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 3_000_000 });
    await gw.call(key, 'PATCH', '/v1/account/settings', { webhook_url: receiver.url });
    // Made under the route's feet, as a settle would: no request tells it, only a sweep.
    await gw.gateway.store.db.updateTable('accounts').set({ low_balance_micros: 5_000_000 }).where('id', '=', accountId).execute();
    const sweeps = await Promise.all(Array.from({ length: 6 }, () => noticeLowBalances(gw.gateway.store, { accountId })));
    assert.equal(sweeps.filter((s) => s.noticed.includes(accountId)).length, 1);
    assert.equal((await queuedFor(accountId)).length, 1);
  });
});

const pick = ({ body }: { body: { low_balance_micros: unknown; balance_low: unknown } }) => ({
  low_balance_micros: body.low_balance_micros,
  balance_low: body.balance_low,
});
