// Paying by card: a Stripe Checkout Session for an amount the account picked. Nothing is credited
// here; the signed checkout.session.completed webhook does that (stripe-events.ts), for the amount
// stored with the session now.
import type { FastifyBaseLogger } from 'fastify';
import type Stripe from 'stripe';
import type { StripeConfig } from '../config/stripe-schema.js';
import { GatewayError } from '../errors.js';
import { insertCardPayment } from '../store/card-payments.js';
import type { Store } from '../store/open.js';
import { minorUnitsFor } from './card-amounts.js';

/** The Top-ups page's own address: where Stripe sends the customer back by default. */
const TOPUPS_PAGE = '/dashboard/topups';

export interface CardOptions {
  enabled: boolean;
  currency: string | null;
  micros_per_minor_unit: number | null;
  min_amount_micros: number | null;
  max_amount_micros: number | null;
}

export const cardOptions = (config: StripeConfig | undefined): CardOptions =>
  config
    ? {
        enabled: true,
        currency: config.currency,
        micros_per_minor_unit: config.micros_per_minor_unit,
        min_amount_micros: config.min_amount_micros,
        max_amount_micros: config.max_amount_micros,
      }
    : { enabled: false, currency: null, micros_per_minor_unit: null, min_amount_micros: null, max_amount_micros: null };

export interface CheckoutDeps {
  stripe: Stripe;
  config: StripeConfig;
  store: Store;
  publicUrl: string;
  log: FastifyBaseLogger;
}

export interface NewCheckoutSession {
  id: string;
  url: string;
  amount_micros: number;
  amount_minor: number;
  currency: string;
}

/** A failed call to Stripe: 502, and nothing stored. The SDK's message may quote the request; only its kind is told. */
function stripeFailed(error: unknown, log: FastifyBaseLogger): GatewayError {
  const { type, code, statusCode, requestId } = error as { type?: string; code?: string; statusCode?: number; requestId?: string };
  log.error({ stripeErrorType: type, stripeErrorCode: code, stripeStatus: statusCode, stripeRequestId: requestId }, 'stripe checkout session not created');
  return new GatewayError(
    502,
    'server_error',
    `the card payment could not be started: Stripe answered ${statusCode ?? 'nothing'} (${type ?? 'no error type'}); try again`,
  );
}

export async function createCheckoutSession(
  { stripe, config, store, publicUrl, log }: CheckoutDeps,
  { accountId, amountMicros, idempotencyKey, now = Date.now() }: { accountId: string; amountMicros: number; idempotencyKey: string; now?: number },
): Promise<NewCheckoutSession> {
  const amountMinor = minorUnitsFor(config, amountMicros);
  let session: Stripe.Checkout.Session;
  try {
    session = await stripe.checkout.sessions.create(
      {
        mode: 'payment',
        line_items: [{ quantity: 1, price_data: { currency: config.currency, unit_amount: amountMinor, product_data: { name: config.product_name } } }],
        client_reference_id: accountId,
        metadata: { account_id: accountId, amount_micros: String(amountMicros) },
        payment_intent_data: { metadata: { account_id: accountId, amount_micros: String(amountMicros) } },
        // amount_total stays in the configured currency, the one the stored amount is checked in.
        adaptive_pricing: { enabled: false },
        success_url: config.success_url ?? `${publicUrl}${TOPUPS_PAGE}?payment=success`,
        cancel_url: config.cancel_url ?? `${publicUrl}${TOPUPS_PAGE}?payment=cancelled`,
      },
      // The SDK's own retries of this request reuse the key: one request, at most one session.
      { idempotencyKey },
    );
  } catch (error) {
    throw stripeFailed(error, log);
  }
  if (!session.url || session.amount_total !== amountMinor || session.currency !== config.currency) {
    log.error(
      { checkoutSession: session.id, amountTotal: session.amount_total, currency: session.currency },
      'stripe answered a checkout session unlike the one asked for',
    );
    throw new GatewayError(502, 'server_error', 'the card payment could not be started: Stripe answered a session unlike the one asked for');
  }
  // Stored before the URL is given out: a session no one can pay is harmless, a paid one we do not know is not.
  await insertCardPayment(store.db, {
    id: session.id,
    account_id: accountId,
    amount_micros: amountMicros,
    amount_minor: amountMinor,
    currency: config.currency,
    status: 'open',
    payment_intent: null,
    refunded_micros: 0,
    disputed_micros: 0,
    dispute_id: null,
    created_at: now,
    paid_at: null,
    updated_at: now,
  });
  log.info({ checkoutSession: session.id, accountId, amountMicros }, 'card payment started');
  return { id: session.id, url: session.url, amount_micros: amountMicros, amount_minor: amountMinor, currency: config.currency };
}
