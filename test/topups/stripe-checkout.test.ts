// Starting a card payment: POST /v1/account/checkout-sessions creates a Stripe Checkout Session
// (against a local fake of Stripe's API) for exactly the amount asked, stores it as an open payment,
// and credits nothing; a refused amount or a failed Stripe stores nothing.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { findCardPayment } from '../../src/store/card-payments.js';
import { FAKE_SECRET_KEY, FAKE_WEBHOOK_SECRET, type FakeStripe, startFakeStripe, stripeConfigFor } from '../helpers/fake-stripe.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

describe('card payments: creating a Checkout Session', () => {
  let fake: FakeStripe;
  let gw: TestGateway;
  before(async () => {
    fake = await startFakeStripe();
    gw = await startTestGateway({ stripe: stripeConfigFor(fake, { min_amount_micros: 5_000_000, max_amount_micros: 500_000_000 }) });
  });
  after(async () => {
    await gw.close();
    await fake.close();
  });

  const countPayments = async () => (await gw.gateway.store.db.selectFrom('card_payments').select('id').execute()).length;

  test('the options say cards are on, in usd, with the configured min and max', async () => {
    const { key } = await gw.account();
    const res = await gw.call(key, 'GET', '/v1/account/card-payments/options');
    assert.deepEqual(res, {
      status: 200,
      body: { enabled: true, currency: 'usd', micros_per_minor_unit: 10_000, min_amount_micros: 5_000_000, max_amount_micros: 500_000_000 },
    });
  });

  test('a session is created for the amount in cents, one line item, the account as client_reference_id and in metadata', async () => {
    const { accountId, key } = await gw.account();
    const res = await gw.call(key, 'POST', '/v1/account/checkout-sessions', { amount_micros: 12_340_000 });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const form = fake.sent.at(-1)!.form;
    assert.deepEqual(
      {
        mode: form.mode,
        currency: form['line_items[0][price_data][currency]'],
        unitAmount: form['line_items[0][price_data][unit_amount]'],
        quantity: form['line_items[0][quantity]'],
        client: form.client_reference_id,
        account: form['metadata[account_id]'],
        micros: form['metadata[amount_micros]'],
        success: form.success_url,
      },
      {
        mode: 'payment',
        currency: 'usd',
        unitAmount: '1234',
        quantity: '1',
        client: accountId,
        account: accountId,
        micros: '12340000',
        success: `${gw.url}/dashboard/topups?payment=success`,
      },
    );
    assert.deepEqual(res.body, { id: res.body.id, url: `${fake.url}/pay/${res.body.id}`, amount_micros: 12_340_000, amount_minor: 1234, currency: 'usd' });
  });

  test('the session is stored as an open payment of the account, and the balance is unchanged', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    const res = await gw.call(key, 'POST', '/v1/account/checkout-sessions', { amount_micros: 20_000_000 });
    const stored = await findCardPayment(gw.gateway.store.db, res.body.id);
    assert.deepEqual(
      { account: stored?.account_id, micros: stored?.amount_micros, minor: stored?.amount_minor, status: stored?.status, refunded: stored?.refunded_micros },
      { account: accountId, micros: 20_000_000, minor: 2000, status: 'open', refunded: 0 },
    );
    assert.equal((await gw.balance(accountId)).balance_micros, 1_000_000);
  });

  test('each request carries its own Idempotency-Key, and the secret key only as the bearer credential', async () => {
    const { key } = await gw.account();
    await gw.call(key, 'POST', '/v1/account/checkout-sessions', { amount_micros: 10_000_000 });
    await gw.call(key, 'POST', '/v1/account/checkout-sessions', { amount_micros: 10_000_000 });
    const [first, second] = fake.sent.slice(-2).map((s) => s.headers);
    assert.match(String(first!['idempotency-key']), /^tollroute-req_/);
    assert.notEqual(first!['idempotency-key'], second!['idempotency-key']);
    assert.equal(first!.authorization, `Bearer ${FAKE_SECRET_KEY}`);
  });

  for (const [amount, why] of [
    [12_345_678, 'not a whole number of cents'],
    [4_990_000, 'below the minimum'],
    [500_010_000, 'above the maximum'],
  ] as const) {
    test(`an amount ${why} is a 400 naming amount_micros, and nothing is sent to Stripe or stored`, async () => {
      const { key } = await gw.account();
      const [sentBefore, storedBefore] = [fake.sent.length, await countPayments()];
      const res = await gw.call(key, 'POST', '/v1/account/checkout-sessions', { amount_micros: amount });
      assert.equal(res.status, 400);
      assert.match(res.body.error, /^amount_micros: /);
      assert.deepEqual([fake.sent.length, await countPayments()], [sentBefore, storedBefore]);
    });
  }

  test('an amount that is not an integer is a 400 naming amount_micros', async () => {
    const { key } = await gw.account();
    const res = await gw.call(key, 'POST', '/v1/account/checkout-sessions', { amount_micros: '10000000' });
    assert.equal(res.status, 400);
    assert.match(res.body.error, /amount_micros/);
  });

  test('Stripe failing is a 502 and stores nothing', async () => {
    const { key } = await gw.account();
    const storedBefore = await countPayments();
    fake.failNext(500);
    const res = await gw.call(key, 'POST', '/v1/account/checkout-sessions', { amount_micros: 10_000_000 });
    assert.equal(res.status, 502);
    assert.match(res.body.error, /card payment could not be started/);
    assert.equal(await countPayments(), storedBefore);
  });

  test('neither the secret key nor the webhook secret appears in the logs', async () => {
    const { key } = await gw.account();
    fake.failNext(500);
    await gw.call(key, 'POST', '/v1/account/checkout-sessions', { amount_micros: 10_000_000 });
    await gw.call(key, 'POST', '/v1/account/checkout-sessions', { amount_micros: 10_000_000 });
    const logs = gw.logText();
    assert.match(logs, /card payment started/);
    assert.equal(logs.includes(FAKE_SECRET_KEY), false);
    assert.equal(logs.includes(FAKE_WEBHOOK_SECRET), false);
  });
});

describe('card payments: Stripe retried by the SDK', () => {
  test('a create that failed once is retried with the same Idempotency-Key, and one payment is stored', async () => {
    const fake = await startFakeStripe();
    const gw = await startTestGateway({ stripe: stripeConfigFor(fake, { max_network_retries: 1 }) });
    try {
      const { key } = await gw.account();
      fake.failNext(500);
      const res = await gw.call(key, 'POST', '/v1/account/checkout-sessions', { amount_micros: 10_000_000 });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      assert.deepEqual(
        fake.sent.map((s) => s.headers['idempotency-key']),
        [fake.sent[0]!.headers['idempotency-key'], fake.sent[0]!.headers['idempotency-key']],
      );
      assert.equal((await gw.gateway.store.db.selectFrom('card_payments').select('id').execute()).length, 1);
    } finally {
      await gw.close();
      await fake.close();
    }
  });
});

describe('card payments: a gateway without a stripe section', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway();
  });
  after(async () => {
    await gw.close();
  });

  test('the options say cards are off', async () => {
    const { key } = await gw.account();
    const res = await gw.call(key, 'GET', '/v1/account/card-payments/options');
    assert.deepEqual(res.body, { enabled: false, currency: null, micros_per_minor_unit: null, min_amount_micros: null, max_amount_micros: null });
  });

  test('creating a session is a 404 saying card payments are not configured', async () => {
    const { key } = await gw.account();
    const res = await gw.call(key, 'POST', '/v1/account/checkout-sessions', { amount_micros: 10_000_000 });
    assert.deepEqual(res, { status: 404, body: { error: 'card payments are not configured on this gateway', type: 'not_found_error' } });
  });
});
