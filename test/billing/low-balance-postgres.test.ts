// Low-balance notices on one PostgreSQL store shared by several instances: each crossing is told
// once, whichever instance's sweep finds it first and however many race for it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createAccount } from '../../src/billing/accounts.js';
import { noticeLowBalances } from '../../src/billing/low-balance.js';
import { updateLowBalanceSettings } from '../../src/store/low-balance.js';
import { openStore, type Store } from '../../src/store/open.js';
import { listWebhooksForTask } from '../../src/store/webhook-outbox.js';
import { verifyWebhook } from '../../src/webhooks/verify.js';
import { eventually, startTestGateway } from '../helpers/gateway.js';
import { freshSchemas, requirePostgresOrSkip } from '../helpers/postgres.js';
import { type Receiver, startReceiver } from '../helpers/receiver.js';

const baseUrl = await requirePostgresOrSkip('low-balance notices on PostgreSQL');

describe('low-balance notices on one PostgreSQL store', { skip: !baseUrl }, () => {
  const nextSchema = baseUrl ? freshSchemas(baseUrl) : () => ({ url: '', schema: '' });
  let receiver: Receiver;
  before(async () => {
    receiver = await startReceiver();
  });
  after(() => receiver.close());

  test('two gateway instances sweeping one store send one event for one crossing', async () => {
    const { url } = nextSchema();
    // Both sweep every 20 ms: each crossing is found by both, about at once.
    const overrides = { store: url, low_balance: { sweep_ms: 20 }, webhooks: { retry_delays_ms: [50], timeout_ms: 2_000 } };
    const first = await startTestGateway(overrides);
    const second = await startTestGateway(overrides);
    try {
      const { accountId, key } = await first.account({ creditMicros: 10_000_000 });
      const secret = (await first.admin('GET', `/admin/accounts/${accountId}/webhook-secret`)).body.secret as string;
      const { balance_micros } = await first.settled(accountId);
      const set = await second.call(key, 'PATCH', '/v1/account/settings', { low_balance_micros: balance_micros - 1, webhook_url: receiver.url });
      assert.equal(set.status, 200, JSON.stringify(set.body));
      const spent = await first.call(key, 'POST', '/v1/chat/completions', { model: 'sandbox-chat', messages: [{ role: 'user', content: 'cross it' }] });
      assert.equal(spent.status, 200);
      const events = () => receiver.deliveries.filter((d) => d.payload.data?.account_id === accountId);
      const [event] = await eventually(() => events().length > 0 && events(), 10_000);
      assert.equal(verifyWebhook(secret, event!.headers, event!.rawBody), true);
      // Many more sweeps of both instances pass; still the one event, queued once.
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.equal(events().length, 1);
      assert.equal((await listWebhooksForTask(first.gateway.store.db, accountId)).length, 1);
    } finally {
      await second.close();
      await first.close();
    }
  });

  test('sweeps racing on two connections to one store mark and queue each crossing once', async () => {
    const { url } = nextSchema();
    const stores: Store[] = [await openStore(url), await openStore(url)];
    try {
      const [a, b] = stores as [Store, Store];
      const ids: string[] = [];
      for (let i = 0; i < 20; i++) {
        const account = await createAccount(a, { name: `race ${i}`, creditMicros: 1_000_000 });
        await updateLowBalanceSettings(a.db, { accountId: account.id, thresholdMicros: 2_000_000, webhookUrl: receiver.url });
        ids.push(account.id);
      }
      const sweeps = await Promise.all([a, b, a, b, a, b].map((store) => noticeLowBalances(store)));
      const noticed = sweeps.flatMap((s) => s.noticed).sort();
      assert.deepEqual(noticed, [...ids].sort(), 'every crossing noticed by exactly one sweep');
      for (const id of ids) assert.equal((await listWebhooksForTask(a.db, id)).length, 1, id);
    } finally {
      await Promise.all(stores.map((store) => store.close()));
    }
  });
});
