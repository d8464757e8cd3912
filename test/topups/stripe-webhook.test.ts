// Stripe's signed webhook moves money: a paid session credits its stored amount once, whatever is
// replayed or arrives twice; refunds and a lost dispute debit exactly what was taken back. Every
// movement is one ledger row naming the payment, and the balance always equals the ledger's sum.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Stripe from 'stripe';
import { checkAccountBalance } from '../../src/billing/accounts.js';
import { findCardPayment } from '../../src/store/card-payments.js';
import {
  chargeOf,
  deliverEvent,
  disputeOf,
  FAKE_WEBHOOK_SECRET,
  type FakeStripe,
  paidSession,
  startFakeStripe,
  stripeConfigFor,
  stripeEvent,
} from '../helpers/fake-stripe.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

describe('card payments: the Stripe webhook', () => {
  let fake: FakeStripe;
  let gw: TestGateway;
  before(async () => {
    fake = await startFakeStripe();
    gw = await startTestGateway({ stripe: stripeConfigFor(fake) });
  });
  after(async () => {
    await gw.close();
    await fake.close();
  });

  /** An account with `creditMicros`, and a session it started for `amountMicros`, as the fake answered it. */
  async function startPayment(amountMicros: number, creditMicros = 1_000_000) {
    const { accountId, key } = await gw.account({ creditMicros });
    const res = await gw.call(key, 'POST', '/v1/account/checkout-sessions', { amount_micros: amountMicros });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const session = fake.sessions.get(res.body.id)!;
    const paymentIntent = `pi_for_${res.body.id}`;
    return { accountId, key, session, paymentIntent, completed: stripeEvent('checkout.session.completed', paidSession(session, paymentIntent)) };
  }
  const ledgerOf = async (accountId: string) => (await gw.admin('GET', `/admin/accounts/${accountId}/ledger`)).body.data as any[];
  const balanceOf = async (accountId: string) => (await gw.balance(accountId)).balance_micros;
  const consistent = async (accountId: string) => (await checkAccountBalance(gw.gateway.store, accountId)).consistent;

  test('checkout.session.completed credits the stored amount with one ledger row naming the session and its PaymentIntent', async () => {
    const { accountId, session, paymentIntent, completed } = await startPayment(25_000_000);
    const res = await deliverEvent(gw.url, completed);
    assert.deepEqual(res, { status: 200, body: { received: true, outcome: 'credited' } });
    assert.equal(await balanceOf(accountId), 26_000_000);
    const [row] = await ledgerOf(accountId);
    assert.deepEqual(
      { kind: row.kind, amount: row.amount_micros, note: row.note },
      { kind: 'credit', amount: 25_000_000, note: `card payment ${session.id} (${paymentIntent})` },
    );
    assert.equal(await consistent(accountId), true);
  });

  test('the paid payment is stored as paid, with its PaymentIntent', async () => {
    const { session, paymentIntent, completed } = await startPayment(10_000_000);
    await deliverEvent(gw.url, completed);
    const stored = await findCardPayment(gw.gateway.store.db, session.id as string);
    assert.deepEqual({ status: stored?.status, pi: stored?.payment_intent }, { status: 'paid', pi: paymentIntent });
  });

  test('the same event delivered again is answered 200 and credits nothing more', async () => {
    const { accountId, completed } = await startPayment(10_000_000);
    await deliverEvent(gw.url, completed);
    const again = await deliverEvent(gw.url, completed);
    assert.deepEqual(again, { status: 200, body: { received: true, outcome: 'replayed' } });
    assert.equal(await balanceOf(accountId), 11_000_000);
    assert.equal((await ledgerOf(accountId)).filter((row) => row.kind === 'credit').length, 2); // the opening credit and the payment
  });

  test('the same event delivered ten times at once credits once', async () => {
    const { accountId, completed } = await startPayment(10_000_000);
    const answers = await Promise.all(Array.from({ length: 10 }, () => deliverEvent(gw.url, completed)));
    assert.deepEqual(answers.map((a) => a.body.outcome).sort(), ['credited', ...Array(9).fill('replayed')]);
    assert.equal(await balanceOf(accountId), 11_000_000);
  });

  test('async_payment_succeeded after completed, another event of the same session, credits nothing more', async () => {
    const { accountId, session, paymentIntent, completed } = await startPayment(10_000_000);
    await deliverEvent(gw.url, completed);
    const later = await deliverEvent(gw.url, stripeEvent('checkout.session.async_payment_succeeded', paidSession(session, paymentIntent)));
    assert.deepEqual(later.body, { received: true, outcome: 'ignored' });
    assert.equal(await balanceOf(accountId), 11_000_000);
  });

  test('a completed session still unpaid (an asynchronous method) credits nothing until async_payment_succeeded', async () => {
    const { accountId, session, paymentIntent } = await startPayment(10_000_000);
    const unpaid = { ...paidSession(session, paymentIntent), payment_status: 'unpaid' };
    assert.equal((await deliverEvent(gw.url, stripeEvent('checkout.session.completed', unpaid))).body.outcome, 'ignored');
    assert.equal(await balanceOf(accountId), 1_000_000);
    const succeeded = await deliverEvent(gw.url, stripeEvent('checkout.session.async_payment_succeeded', paidSession(session, paymentIntent)));
    assert.equal(succeeded.body.outcome, 'credited');
    assert.equal(await balanceOf(accountId), 11_000_000);
  });

  test('a paid session whose amount_total differs from the stored amount credits nothing, whatever its metadata says', async () => {
    const { accountId, session, paymentIntent } = await startPayment(10_000_000);
    const altered = { ...paidSession(session, paymentIntent), amount_total: 100_000, metadata: { account_id: accountId, amount_micros: '1000000000' } };
    const res = await deliverEvent(gw.url, stripeEvent('checkout.session.completed', altered));
    assert.deepEqual(res, { status: 200, body: { received: true, outcome: 'ignored' } });
    assert.equal(await balanceOf(accountId), 1_000_000);
  });

  test('a bad signature is a 400 and credits nothing; the event, signed rightly later, still credits', async () => {
    const { accountId, completed } = await startPayment(10_000_000);
    const forged = await deliverEvent(gw.url, completed, { secret: 'whsec_not_the_endpoint_secret' });
    assert.equal(forged.status, 400);
    assert.match(forged.body.error, /^stripe-signature: /);
    assert.equal(await balanceOf(accountId), 1_000_000);
    assert.equal((await deliverEvent(gw.url, completed)).body.outcome, 'credited');
  });

  test('a missing signature is a 400 naming stripe-signature', async () => {
    const { completed } = await startPayment(10_000_000);
    const res = await deliverEvent(gw.url, completed, { signature: null });
    assert.deepEqual(res, { status: 400, body: { error: 'stripe-signature: the header is missing', type: 'invalid_request_error' } });
  });

  test('a body changed after signing is a 400 and credits nothing', async () => {
    const { accountId, completed } = await startPayment(10_000_000);
    const payload = JSON.stringify(completed);
    const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: FAKE_WEBHOOK_SECRET });
    const tampered = { ...completed, data: { object: { ...completed.data.object, amount_total: 999_999 } } };
    assert.equal((await deliverEvent(gw.url, tampered, { signature })).status, 400);
    assert.equal(await balanceOf(accountId), 1_000_000);
  });

  test('a partial refund, then the full refund, debit exactly the refunded amounts with ledger rows naming the payment', async () => {
    const { accountId, session, paymentIntent, completed } = await startPayment(30_000_000);
    await deliverEvent(gw.url, completed);
    const partial = await deliverEvent(gw.url, stripeEvent('charge.refunded', chargeOf(paymentIntent, { amount: 3000, amountRefunded: 1250 })));
    assert.equal(partial.body.outcome, 'debited');
    assert.equal(await balanceOf(accountId), 31_000_000 - 12_500_000);
    await deliverEvent(gw.url, stripeEvent('charge.refunded', chargeOf(paymentIntent, { amount: 3000, amountRefunded: 3000 })));
    assert.equal(await balanceOf(accountId), 1_000_000);
    const debits = (await ledgerOf(accountId)).filter((row) => row.kind === 'debit');
    assert.deepEqual(
      debits.map((row) => row.amount_micros),
      [-17_500_000, -12_500_000],
    );
    for (const row of debits) assert.match(row.note, new RegExp(`^card refund of ${session.id} \\(ch_for_${paymentIntent}\\)`));
    assert.equal((await findCardPayment(gw.gateway.store.db, session.id as string))?.status, 'refunded');
    assert.equal(await consistent(accountId), true);
  });

  test('a refund event replayed, or an older refund event arriving late, debits nothing more', async () => {
    const { accountId, paymentIntent, completed } = await startPayment(30_000_000);
    await deliverEvent(gw.url, completed);
    const full = stripeEvent('charge.refunded', chargeOf(paymentIntent, { amount: 3000, amountRefunded: 3000 }));
    await deliverEvent(gw.url, full);
    assert.equal((await deliverEvent(gw.url, full)).body.outcome, 'replayed');
    const late = await deliverEvent(gw.url, stripeEvent('charge.refunded', chargeOf(paymentIntent, { amount: 3000, amountRefunded: 1000 })));
    assert.equal(late.body.outcome, 'ignored');
    assert.equal(await balanceOf(accountId), 1_000_000);
  });

  test('a refund of money already spent takes the balance below zero, and the ledger still sums to it', async () => {
    const { accountId, key, paymentIntent, completed } = await startPayment(10_000_000, 0);
    await deliverEvent(gw.url, completed);
    const spent = await gw.call(key, 'POST', '/v1/chat/completions', { model: 'sandbox-chat', messages: [{ role: 'user', content: 'spend some' }] });
    assert.equal(spent.status, 200);
    const left = (await gw.settled(accountId)).balance_micros;
    assert.ok(left < 10_000_000, `${left} left`);
    await deliverEvent(gw.url, stripeEvent('charge.refunded', chargeOf(paymentIntent, { amount: 1000, amountRefunded: 1000 })));
    assert.equal(await balanceOf(accountId), left - 10_000_000);
    assert.equal(await consistent(accountId), true);
  });

  test('a lost dispute debits the disputed amount once, however often it is reported', async () => {
    const { accountId, session, paymentIntent, completed } = await startPayment(20_000_000);
    await deliverEvent(gw.url, completed);
    const lost = disputeOf(paymentIntent, { amount: 2000, status: 'lost' });
    assert.equal((await deliverEvent(gw.url, stripeEvent('charge.dispute.closed', lost))).body.outcome, 'debited');
    assert.equal((await deliverEvent(gw.url, stripeEvent('charge.dispute.closed', lost))).body.outcome, 'ignored');
    assert.equal(await balanceOf(accountId), 1_000_000);
    const [row] = await ledgerOf(accountId);
    assert.deepEqual(
      { kind: row.kind, amount: row.amount_micros, note: row.note },
      { kind: 'debit', amount: -20_000_000, note: `card dispute ${lost.id} lost on ${session.id} (ch_for_${paymentIntent})` },
    );
  });

  test('a dispute won, or funds withdrawn while it is open, debits nothing', async () => {
    const { accountId, paymentIntent, completed } = await startPayment(20_000_000);
    await deliverEvent(gw.url, completed);
    const open = disputeOf(paymentIntent, { amount: 2000, status: 'needs_response' });
    await deliverEvent(gw.url, stripeEvent('charge.dispute.funds_withdrawn', open));
    await deliverEvent(gw.url, stripeEvent('charge.dispute.closed', { ...open, status: 'won' }));
    assert.equal(await balanceOf(accountId), 21_000_000);
  });

  test('a lost dispute after a partial refund debits only what the refund left', async () => {
    const { accountId, paymentIntent, completed } = await startPayment(20_000_000);
    await deliverEvent(gw.url, completed);
    await deliverEvent(gw.url, stripeEvent('charge.refunded', chargeOf(paymentIntent, { amount: 2000, amountRefunded: 500 })));
    await deliverEvent(gw.url, stripeEvent('charge.dispute.closed', disputeOf(paymentIntent, { amount: 2000, status: 'lost' })));
    assert.equal(await balanceOf(accountId), 1_000_000);
  });

  test('the log names each event applied, and never the webhook secret or a signature header', async () => {
    const { completed } = await startPayment(10_000_000);
    const payload = JSON.stringify(completed);
    const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: FAKE_WEBHOOK_SECRET });
    await deliverEvent(gw.url, completed, { signature });
    const logs = gw.logText();
    assert.match(logs, new RegExp(`"stripeEvent":"${completed.id}".*"outcome":"credited"`));
    assert.equal(logs.includes(FAKE_WEBHOOK_SECRET), false);
    assert.equal(logs.includes(signature.split(',v1=')[1]!), false);
  });

  test('an event of another type, or about a session the gateway did not create, is answered 200 and changes nothing', async () => {
    const other = await deliverEvent(gw.url, stripeEvent('customer.created', { id: 'cus_1', object: 'customer' }));
    assert.deepEqual(other, { status: 200, body: { received: true, outcome: 'ignored' } });
    const foreign = { id: 'cs_test_not_ours', object: 'checkout.session', payment_status: 'paid', amount_total: 1000, currency: 'usd', payment_intent: 'pi_x' };
    assert.equal((await deliverEvent(gw.url, stripeEvent('checkout.session.completed', foreign))).body.outcome, 'ignored');
  });
});

describe('card payments: the webhook of a gateway without a stripe section', () => {
  test('is a 404 saying card payments are not configured', async () => {
    const gw = await startTestGateway();
    try {
      const res = await deliverEvent(gw.url, stripeEvent('checkout.session.completed', { id: 'cs_test_x' }));
      assert.deepEqual(res, { status: 404, body: { error: 'card payments are not configured on this gateway', type: 'not_found_error' } });
    } finally {
      await gw.close();
    }
  });
});
