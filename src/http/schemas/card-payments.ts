// JSON schemas of card top-ups through Stripe Checkout: the account's options and new sessions
// (/v1/account/…), and Stripe's webhook (POST /webhooks/stripe).
import { CHANGE_ERRORS, micros, READ_ERRORS, stringOrNull, tags } from './account.js';
import { errorResponse } from './errors.js';

const OFF = 'Card payments are not configured on this gateway (no `stripe:` section).';

export const CardOptionsSchema = {
  tags,
  summary: 'Whether the gateway takes card payments (Stripe Checkout), in which currency, and the least and most one payment may be.',
  response: {
    200: {
      description: 'The options; every field but `enabled` is null when cards are off.',
      type: 'object',
      required: ['enabled', 'currency', 'micros_per_minor_unit', 'min_amount_micros', 'max_amount_micros'],
      properties: {
        enabled: { type: 'boolean', description: 'True when the operator configured Stripe.' },
        currency: stringOrNull('The currency paid in (ISO 4217, lower case).'),
        micros_per_minor_unit: { type: ['integer', 'null'], description: 'Micros one minor unit of the currency (a cent) buys: amounts are multiples of it.' },
        min_amount_micros: { type: ['integer', 'null'], description: 'The least one payment may credit.' },
        max_amount_micros: { type: ['integer', 'null'], description: 'The most one payment may credit.' },
      },
    },
    ...READ_ERRORS,
  },
};

export const CreateCheckoutSessionSchema = {
  tags,
  summary: 'Starts a card payment: a Stripe Checkout Session for the amount; send the browser to its url.',
  description:
    'The balance is credited with amount_micros, once, when Stripe reports the session paid (its signed webhook), never by this call. The amount is a whole number of the currency’s minor units, within the options’ min and max.',
  body: {
    type: 'object',
    required: ['amount_micros'],
    additionalProperties: false,
    properties: {
      amount_micros: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'What the payment credits, in micros.' },
    },
  },
  response: {
    201: {
      description: 'The session, stored as an open card payment of the account.',
      type: 'object',
      required: ['id', 'url', 'amount_micros', 'amount_minor', 'currency'],
      properties: {
        id: { type: 'string', description: 'The Checkout Session id (cs_…); the ledger row of its credit names it.' },
        url: { type: 'string', description: 'Stripe’s payment page for the session.' },
        amount_micros: micros('What the payment credits once paid.'),
        amount_minor: { type: 'integer', description: 'The amount charged, in the currency’s minor units.' },
        currency: { type: 'string', description: 'The currency charged (ISO 4217, lower case).' },
      },
    },
    ...errorResponse(400, 'amount_micros is not a whole number of minor units, or is outside the options’ min and max.'),
    ...errorResponse(404, OFF),
    ...errorResponse(502, 'Stripe failed or refused to create the session; nothing was stored or charged.'),
    ...CHANGE_ERRORS,
  },
};

export const StripeWebhookSchema = {
  tags: ['payments'],
  summary: 'Stripe’s webhook: signed events of card payments credit and debit balances, each event once.',
  description:
    'Point a Stripe webhook endpoint here. checkout.session.completed and checkout.session.async_payment_succeeded credit a paid session’s stored amount once; charge.refunded debits what is newly refunded; charge.dispute.closed with status lost debits the disputed amount once. Other events are answered 200 and change nothing. An event id seen before is answered 200 and changes nothing.',
  docsOnly: {
    headers: {
      type: 'object',
      required: ['stripe-signature'],
      properties: { 'stripe-signature': { type: 'string', description: 'Stripe’s signature of the raw body with the endpoint’s signing secret (t=…,v1=…).' } },
    },
    body: {
      type: 'object',
      required: ['id', 'type', 'data'],
      description: 'A Stripe event, read as the raw bytes the signature covers.',
      properties: {
        id: { type: 'string', description: 'The event id (evt_…).' },
        type: { type: 'string', description: 'The event type, e.g. checkout.session.completed.' },
        data: { type: 'object', description: 'The event’s object (a Checkout Session, a Charge or a Dispute).' },
      },
    },
  },
  response: {
    200: {
      description: 'The event was applied, or needed nothing.',
      type: 'object',
      required: ['received', 'outcome'],
      properties: {
        received: { type: 'boolean', description: 'Always true.' },
        outcome: {
          type: 'string',
          enum: ['credited', 'debited', 'replayed', 'ignored'],
          description: 'What the event did: a credit, a debit, nothing as a replay of an event applied before, or nothing.',
        },
      },
    },
    ...errorResponse(400, 'The Stripe-Signature header is missing, does not sign this body with the webhook secret, or is too old; nothing changed.'),
    ...errorResponse(404, OFF),
    ...errorResponse(500, 'The event could not be applied now; nothing changed, and Stripe delivers it again.'),
    ...errorResponse(503, 'The gateway is shutting down, or its store cannot be used right now; Stripe delivers the event again.'),
  },
};
