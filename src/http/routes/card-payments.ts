// Card top-ups for the account holder (key or console session): the options, and a new Stripe
// Checkout Session. Registered by account.ts, inside its rate limit. The credit comes later, from
// Stripe's webhook (stripe-webhook.ts).
import type { FastifyPluginAsync } from 'fastify';
import { notFound } from '../../errors.js';
import type { Store } from '../../store/open.js';
import { cardOptions, createCheckoutSession } from '../../topups/checkout.js';
import type { CardPayments } from '../../topups/stripe-client.js';
import { requireCaller } from '../auth.js';
import { CardOptionsSchema, CreateCheckoutSessionSchema } from '../schemas/card-payments.js';

export interface CardPaymentRouteDeps {
  store: Store;
  cards: CardPayments;
  publicUrl: string;
}

export const CARDS_OFF = 'card payments are not configured on this gateway';

export const cardPaymentRoutes: FastifyPluginAsync<CardPaymentRouteDeps> = async (app, { store, cards, publicUrl }) => {
  app.get('/v1/account/card-payments/options', { schema: CardOptionsSchema }, async () => cardOptions(cards?.config));

  app.post('/v1/account/checkout-sessions', { schema: CreateCheckoutSessionSchema }, async (request, reply) => {
    const { accountId } = requireCaller(request);
    if (!cards) throw notFound(CARDS_OFF);
    const { amount_micros } = request.body as { amount_micros: number };
    const session = await createCheckoutSession(
      { ...cards, store, publicUrl, log: request.log },
      // One key per request: the SDK's retries of it make one session at most.
      { accountId, amountMicros: amount_micros, idempotencyKey: `tollroute-${request.id}` },
    );
    reply.header('cache-control', 'no-store');
    return reply.code(201).send(session);
  });
};
