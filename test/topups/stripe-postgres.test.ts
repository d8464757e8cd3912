// Two gateway instances on one PostgreSQL store, each handed the same Stripe events at the same
// moment (Stripe retrying while the first delivery is still being applied): each payment is
// credited once, and each refund debited once.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { checkAccountBalance } from '../../src/billing/accounts.js';
import { chargeOf, deliverEvent, type FakeStripe, paidSession, startFakeStripe, stripeConfigFor, stripeEvent } from '../helpers/fake-stripe.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { freshSchemas, requirePostgresOrSkip } from '../helpers/postgres.js';

const baseUrl = await requirePostgresOrSkip('card payments on two instances sharing PostgreSQL');

describe('card payments: two instances on one PostgreSQL store', { skip: !baseUrl }, () => {
  // Registered here, not in a hook: its schema is dropped after the file's tests.
  const freshSchema = baseUrl ? freshSchemas(baseUrl) : undefined;
  let fake: FakeStripe;
  let first: TestGateway;
  let second: TestGateway;
  before(async () => {
    const store = freshSchema!().url;
    fake = await startFakeStripe();
    first = await startTestGateway({ store, stripe: stripeConfigFor(fake) });
    second = await startTestGateway({ store, stripe: stripeConfigFor(fake) });
  });
  after(async () => {
    await second?.close();
    await first?.close();
    await fake?.close();
  });

  async function paidPayment(amountMicros: number) {
    const { accountId, key } = await first.account({ creditMicros: 0 });
    const res = await first.call(key, 'POST', '/v1/account/checkout-sessions', { amount_micros: amountMicros });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const paymentIntent = `pi_for_${res.body.id}`;
    return { accountId, paymentIntent, completed: stripeEvent('checkout.session.completed', paidSession(fake.sessions.get(res.body.id)!, paymentIntent)) };
  }
  /** The event delivered `times` times to each instance, all at once. */
  const deliverToBoth = (event: unknown, times: number) =>
    Promise.all(Array.from({ length: times }, (_, i) => deliverEvent((i % 2 === 0 ? first : second).url, event)));

  test('the same completed event delivered to both instances at once credits once', async () => {
    const { accountId, completed } = await paidPayment(40_000_000);
    const answers = await deliverToBoth(completed, 8);
    assert.deepEqual(
      answers.map((a) => a.status),
      Array(8).fill(200),
    );
    assert.deepEqual(answers.map((a) => a.body.outcome).sort(), ['credited', ...Array(7).fill('replayed')]);
    assert.equal((await first.balance(accountId)).balance_micros, 40_000_000);
    assert.equal((await checkAccountBalance(first.gateway.store, accountId)).consistent, true);
  });

  test('completed on one instance and async_payment_succeeded on the other, at once, credit once', async () => {
    const { accountId, paymentIntent, completed } = await paidPayment(40_000_000);
    const succeeded = stripeEvent('checkout.session.async_payment_succeeded', completed.data.object);
    const answers = await Promise.all([deliverEvent(first.url, completed), deliverEvent(second.url, succeeded)]);
    assert.deepEqual(answers.map((a) => a.body.outcome).sort(), ['credited', 'ignored'], paymentIntent);
    assert.equal((await second.balance(accountId)).balance_micros, 40_000_000);
  });

  test('two refund events of one charge applied at once on both instances debit the refunded total once', async () => {
    const { accountId, paymentIntent, completed } = await paidPayment(40_000_000);
    await deliverEvent(first.url, completed);
    const partial = stripeEvent('charge.refunded', chargeOf(paymentIntent, { amount: 4000, amountRefunded: 1500 }));
    const full = stripeEvent('charge.refunded', chargeOf(paymentIntent, { amount: 4000, amountRefunded: 4000 }));
    await Promise.all([deliverEvent(first.url, partial), deliverEvent(second.url, full), deliverEvent(second.url, partial), deliverEvent(first.url, full)]);
    assert.equal((await first.balance(accountId)).balance_micros, 0);
    assert.equal((await checkAccountBalance(first.gateway.store, accountId)).consistent, true);
  });
});
