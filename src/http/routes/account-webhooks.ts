// The account's webhook actions: redeliver a dropped delivery, and send a signed test event to a
// URL. Registered by account.ts, inside its rate limit.
import type { FastifyPluginAsync } from 'fastify';
import { deliveryView } from '../../account/views.js';
import { conflict, invalidRequest, notFound } from '../../errors.js';
import { parseUserUrl } from '../../net/url-policy.js';
import { findAccount } from '../../store/accounts.js';
import type { Store } from '../../store/open.js';
import { findAccountWebhook, rearmDroppedWebhook } from '../../store/webhook-outbox.js';
import { sendTestEvent } from '../../webhooks/test-event.js';
import { requireCaller } from '../auth.js';
import { RedeliverSchema, TestEventSchema } from '../schemas/account.js';

export interface AccountWebhookDeps {
  store: Store;
  /** What deliveries go out with: the test event is sent the same way. */
  webhooks: { timeoutMs: number; allowPrivate: boolean };
}

export const accountWebhookRoutes: FastifyPluginAsync<AccountWebhookDeps> = async (app, { store, webhooks }) => {
  const db = store.db;

  app.post('/v1/account/webhook-deliveries/:id/redeliver', { schema: RedeliverSchema }, async (request) => {
    const { accountId } = requireCaller(request);
    const { id } = request.params as { id: string };
    // The outbox's deliverer (on whichever instance claims it first) sends it within its poll interval.
    const rearmed = await rearmDroppedWebhook(db, { id, accountId, now: Date.now() });
    if (rearmed) return deliveryView(rearmed);
    const delivery = await findAccountWebhook(db, { id, accountId });
    if (!delivery) throw notFound(`webhook delivery ${id} not found`);
    throw conflict(
      delivery.state === 'delivered'
        ? `webhook delivery ${id} was delivered; only a dropped delivery can be redelivered`
        : `webhook delivery ${id} is pending, with attempts still to come; only a dropped delivery can be redelivered`,
    );
  });

  app.post('/v1/account/webhook-secret/test', { schema: TestEventSchema }, async (request, reply) => {
    const { accountId } = requireCaller(request);
    const { url } = request.body as { url: string };
    const parsed = parseUserUrl(url, 'url');
    if ('problem' in parsed) throw invalidRequest(parsed.problem);
    const account = await findAccount(db, accountId);
    if (!account) throw notFound(`account ${accountId} not found`);
    reply.header('cache-control', 'no-store');
    // 200 either way: the call worked; an unreachable or refused receiver is reported in `error`.
    return sendTestEvent({ url: parsed.url.href, accountId, secret: account.webhook_secret, ...webhooks });
  });
};
