// Applying Stripe's signed webhook events to balances. Each event is applied in one transaction that
// first records its id (a replay, even one delivered to another instance at the same moment, changes
// nothing), then moves money only through a conditional update of the payment (store/card-payments.ts):
// a payment is credited once, whichever of its events comes first, and debited at most what it
// credited. Debits may take the balance below zero: the money was spent before the card holder took
// it back, and a balance below zero refuses calls until it is topped up.
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type Stripe from 'stripe';
import { creditIn } from '../billing/accounts.js';
import { ledgerRow } from '../billing/movements.js';
import type { StripeConfig } from '../config/stripe-schema.js';
import { invalidRequest } from '../errors.js';
import { adjustAccount } from '../store/accounts.js';
import {
  type CardPaymentRow,
  findCardPayment,
  findCardPaymentByIntent,
  markCardPaymentPaid,
  markDisputeLost,
  raiseRefunded,
  recordStripeEvent,
} from '../store/card-payments.js';
import { insertLedgerRow } from '../store/ledger-rows.js';
import type { Store } from '../store/open.js';
import type { DB } from '../store/schema.js';
import { microsOfMinorUnits } from './card-amounts.js';

export type EventOutcome = 'credited' | 'debited' | 'replayed' | 'ignored';

export interface StripeEventDeps {
  stripe: Stripe;
  config: StripeConfig;
  store: Store;
}

/** The event, if the Stripe-Signature header signs exactly these bytes with the webhook secret, recently; else a 400. */
export function verifiedEvent({ stripe, config }: StripeEventDeps, rawBody: Buffer, signature: string | string[] | undefined): Stripe.Event {
  if (typeof signature !== 'string' || signature === '') throw invalidRequest('stripe-signature: the header is missing');
  try {
    return stripe.webhooks.constructEvent(rawBody, signature, config.webhook_secret, config.webhook_tolerance_seconds);
  } catch {
    throw invalidRequest('stripe-signature: does not sign this body with the webhook secret, or is too old');
  }
}

/** An id the event names, whether Stripe sent it as an id or as the expanded object. */
const idOf = (value: unknown): string | null =>
  typeof value === 'string' ? value : typeof (value as { id?: unknown } | null)?.id === 'string' ? (value as { id: string }).id : null;

interface Applying {
  trx: Kysely<DB>;
  config: StripeConfig;
  log: FastifyBaseLogger;
  now: number;
}

export async function applyStripeEvent(deps: StripeEventDeps, event: Stripe.Event, log: FastifyBaseLogger, now = Date.now()): Promise<EventOutcome> {
  const outcome = await deps.store.db.transaction().execute(async (trx): Promise<EventOutcome> => {
    if (!(await recordStripeEvent(trx, { id: event.id, type: event.type, now }))) return 'replayed';
    const applying: Applying = { trx, config: deps.config, log, now };
    switch (event.type) {
      case 'checkout.session.completed':
      case 'checkout.session.async_payment_succeeded':
        return creditSession(applying, event.data.object);
      case 'charge.refunded':
        return debitRefund(applying, event.data.object);
      case 'charge.dispute.closed':
        return debitLostDispute(applying, event.data.object);
      default:
        return 'ignored';
    }
  });
  log.info({ stripeEvent: event.id, stripeEventType: event.type, outcome }, 'stripe event received');
  return outcome;
}

async function creditSession({ trx, config, log, now }: Applying, session: Stripe.Checkout.Session): Promise<EventOutcome> {
  // Unpaid: an asynchronous method still to settle; async_payment_succeeded follows when it does.
  if (session.payment_status !== 'paid') return 'ignored';
  const payment = await findCardPayment(trx, session.id);
  // Another integration's session on the same Stripe account.
  if (!payment) return 'ignored';
  // The amount credited is the one stored at creation, and only when Stripe charged exactly that.
  const chargedMicros = session.currency === payment.currency ? microsOfMinorUnits(config, session.amount_total) : undefined;
  if (chargedMicros !== payment.amount_micros) {
    log.error(
      { checkoutSession: payment.id, amountTotal: session.amount_total, currency: session.currency, storedMicros: payment.amount_micros },
      'stripe checkout session paid an amount other than the one stored: not credited',
    );
    return 'ignored';
  }
  const paymentIntent = idOf(session.payment_intent);
  const paid = await markCardPaymentPaid(trx, { id: payment.id, paymentIntent, now });
  if (!paid) return 'ignored'; // credited by the session's other event
  const note = `card payment ${paid.id}${paymentIntent ? ` (${paymentIntent})` : ''}`;
  const account = await creditIn(trx, { accountId: paid.account_id, amountMicros: paid.amount_micros, note, now });
  // Undone with the event: Stripe delivers it again later.
  if (!account) throw new Error(`card payment ${paid.id}: account ${paid.account_id} missing or past the most the store keeps`);
  return 'credited';
}

/** What of the payment may still be taken back: never more than it credited. */
const debitable = (payment: CardPaymentRow) => payment.amount_micros - payment.refunded_micros - payment.disputed_micros;

async function debit({ trx, now }: Applying, payment: CardPaymentRow, micros: number, note: string): Promise<void> {
  await adjustAccount(trx, { accountId: payment.account_id, balanceDeltaMicros: -micros, heldDeltaMicros: 0 });
  await insertLedgerRow(trx, ledgerRow({ accountId: payment.account_id, kind: 'debit', balanceDelta: -micros, note, now }));
}

/** The paid payment a charge or dispute belongs to, in the same currency; undefined (logged) otherwise. */
async function paymentOf({ trx, log }: Applying, what: { paymentIntent: string | null; currency: string; objectId: string }) {
  const payment = what.paymentIntent ? await findCardPaymentByIntent(trx, what.paymentIntent) : undefined;
  if (!payment) return undefined;
  if (payment.currency !== what.currency) {
    log.error(
      { checkoutSession: payment.id, stripeObject: what.objectId, currency: what.currency },
      'stripe event in another currency than its payment: not applied',
    );
    return undefined;
  }
  return payment;
}

// A charge's amount_refunded is the total so far: the debit is what it adds to what was debited
// before. Two refund events applied at once by two instances: the second's update finds the total
// moved, reads it again and debits only what is still new.
async function debitRefund(applying: Applying, charge: Stripe.Charge): Promise<EventOutcome> {
  const found = { paymentIntent: idOf(charge.payment_intent), currency: charge.currency, objectId: charge.id };
  for (let attempt = 0; attempt < 5; attempt++) {
    const payment = await paymentOf(applying, found);
    const refundedMicros = microsOfMinorUnits(applying.config, charge.amount_refunded);
    if (!payment || refundedMicros === undefined) return 'ignored';
    const micros = Math.min(refundedMicros - payment.refunded_micros, debitable(payment));
    if (micros <= 0) return 'ignored';
    const to = payment.refunded_micros + micros;
    const raised = await raiseRefunded(applying.trx, {
      id: payment.id,
      from: payment.refunded_micros,
      to,
      fullyRefunded: to === payment.amount_micros,
      now: applying.now,
    });
    if (!raised) continue;
    await debit(applying, payment, micros, `card refund of ${payment.id} (${charge.id}): ${to} of ${payment.amount_micros} micros refunded in all`);
    return 'debited';
  }
  throw new Error(`card payment refund ${charge.id}: the payment kept changing`);
}

// Only a dispute closed as lost takes money back: funds withdrawn while it is open come back if it
// is won, so they move nothing here.
async function debitLostDispute(applying: Applying, dispute: Stripe.Dispute): Promise<EventOutcome> {
  if (dispute.status !== 'lost') return 'ignored';
  const payment = await paymentOf(applying, { paymentIntent: idOf(dispute.payment_intent), currency: dispute.currency, objectId: dispute.id });
  const disputedMicros = microsOfMinorUnits(applying.config, dispute.amount);
  if (!payment || disputedMicros === undefined) return 'ignored';
  const micros = Math.min(disputedMicros, debitable(payment));
  if (micros <= 0) return 'ignored';
  if (!(await markDisputeLost(applying.trx, { id: payment.id, disputeId: dispute.id, micros, now: applying.now }))) return 'ignored';
  await debit(applying, payment, micros, `card dispute ${dispute.id} lost on ${payment.id} (${idOf(dispute.charge)})`);
  return 'debited';
}
