// POST /webhooks/stripe: Stripe's signed events of card payments (topups/stripe-events.ts). Public,
// no API key: the signature over the raw body is the credential, so this scope reads JSON bodies as
// bytes, and every other route keeps the gateway's own JSON parser.
import type { FastifyPluginAsync } from 'fastify';
import { notFound } from '../../errors.js';
import type { Store } from '../../store/open.js';
import type { CardPayments } from '../../topups/stripe-client.js';
import { applyStripeEvent, verifiedEvent } from '../../topups/stripe-events.js';
import { StripeWebhookSchema } from '../schemas/card-payments.js';
import { CARDS_OFF } from './card-payments.js';

export const stripeWebhookRoutes: FastifyPluginAsync<{ store: Store; cards: CardPayments }> = async (app, { store, cards }) => {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

  app.post('/webhooks/stripe', { schema: StripeWebhookSchema }, async (request) => {
    if (!cards) throw notFound(CARDS_OFF);
    const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
    const deps = { ...cards, store };
    const event = verifiedEvent(deps, body, request.headers['stripe-signature']);
    return { received: true, outcome: await applyStripeEvent(deps, event, request.log) };
  });
};
