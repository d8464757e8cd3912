// The account API (/v1/account): what an account holder scripts with its own tr- key, or uses from
// the console with its session cookie (session-auth.ts), scoped to that key's or session's account. Another account's key or task is answered 404 exactly like a missing one, so ids
// reveal nothing. Reads charge nothing but count against the key's rate limit, like task reads.
// Usage and spend are in account-usage.ts.
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { galleryView } from '../../account/gallery-view.js';
import { deliveryView, taskListView } from '../../account/views.js';
import { accountView } from '../../admin/views.js';
import { callerHasLimits } from '../../billing/key-limits.js';
import { isBalanceLow } from '../../billing/low-balance.js';
import { rotateWebhookSecret } from '../../billing/webhook-secret.js';
import type { RedemptionConfig } from '../../config/redemption-schema.js';
import { forbidden, notFound } from '../../errors.js';
import type { Pipeline } from '../../pipeline/metered-call.js';
import { type AccountRow, findAccount } from '../../store/accounts.js';
import type { Store } from '../../store/open.js';
import type { TaskKind, TaskStatus } from '../../store/schema.js';
import { findAccountTask, listAccountGallery, listAccountTasks, MEDIA_TASK_KINDS, type MediaTaskKind } from '../../store/tasks.js';
import { listAccountWebhooks } from '../../store/webhook-outbox.js';
import { requireCaller } from '../auth.js';
import { readPage, toPage } from '../cursor.js';
import type { KeyResolver } from '../key-resolver.js';
import { ListDeliveriesSchema, ListTasksSchema, RotateWebhookSecretSchema, WebhookSecretSchema } from '../schemas/account.js';
import { GallerySchema } from '../schemas/gallery.js';
import { AccountWithLowBalanceSchema } from '../schemas/low-balance.js';
import { accountKeyRoutes } from './account-keys.js';
import { accountSettingsRoutes } from './account-settings.js';
import { accountTopUpRoutes } from './account-topups.js';
import { accountUsageRoutes } from './account-usage.js';
import { type AccountWebhookDeps, accountWebhookRoutes } from './account-webhooks.js';
import { type CardPaymentRouteDeps, cardPaymentRoutes } from './card-payments.js';
import { accountModelRoutes } from './models.js';

export interface AccountRouteDeps {
  store: Store;
  pipeline: Pipeline;
  keys: KeyResolver;
  webhooks: AccountWebhookDeps['webhooks'];
  /** The wrong-code limit of redemptions (account-topups.ts). */
  redemption: RedemptionConfig;
  /** Card top-ups through Stripe Checkout (card-payments.ts); off without them. */
  cards?: Omit<CardPaymentRouteDeps, 'store'>;
}

// A task still being submitted is shown as queued (task-views.ts), so a filter on queued takes both.
const STORED_STATUSES: Record<string, TaskStatus[]> = {
  queued: ['submitting', 'queued'],
  processing: ['processing'],
  succeeded: ['succeeded'],
  failed: ['failed'],
  cancelled: ['cancelled'],
};

export const accountRoutes: FastifyPluginAsync<AccountRouteDeps> = async (app, deps) => {
  const { store, pipeline, keys } = deps;
  const db = store.db;

  app.addHook('preHandler', async (request) => {
    await pipeline.admit(requireCaller(request), request.log);
  });
  // Registered after the hook, so the usage, webhook, key and model routes are rate-limited too.
  await app.register(accountUsageRoutes, { store });
  await app.register(accountWebhookRoutes, { store, webhooks: deps.webhooks });
  await app.register(accountKeyRoutes, { store, pipeline, keys });
  await app.register(accountModelRoutes, { pipeline });
  await app.register(accountSettingsRoutes, { store });
  await app.register(accountTopUpRoutes, { store, redemption: deps.redemption });
  await app.register(cardPaymentRoutes, { store, cards: deps.cards?.cards, publicUrl: deps.cards?.publicUrl ?? '' });

  const callerAccount = async (accountId: string): Promise<AccountRow> => {
    const account = await findAccount(db, accountId);
    // A live key's account exists; answered 404 rather than 500 should one ever go while its key works.
    if (!account) throw notFound(`account ${accountId} not found`);
    return account;
  };

  app.get('/v1/account', { schema: AccountWithLowBalanceSchema }, async (request) => {
    const account = await callerAccount(requireCaller(request).accountId);
    // The threshold beside the balance it is judged on (billing/low-balance.ts).
    return { ...accountView(account), low_balance_micros: account.low_balance_micros, balance_low: isBalanceLow(account) };
  });

  app.get('/v1/account/tasks', { schema: ListTasksSchema }, async (request) => {
    const { kind, status } = request.query as { kind?: TaskKind; status?: string };
    const { limit, olderThan } = readPage(request.query);
    const rows = await listAccountTasks(db, {
      accountId: requireCaller(request).accountId,
      kind,
      statuses: status === undefined ? undefined : STORED_STATUSES[status],
      olderThan,
      limit: limit + 1,
    });
    return toPage(rows, limit, taskListView);
  });

  app.get('/v1/account/gallery', { schema: GallerySchema }, async (request) => {
    const { kind } = request.query as { kind?: MediaTaskKind };
    const { limit, olderThan } = readPage(request.query);
    const rows = await listAccountGallery(db, {
      accountId: requireCaller(request).accountId,
      kinds: kind === undefined ? MEDIA_TASK_KINDS : [kind],
      olderThan,
      limit: limit + 1,
    });
    return toPage(rows, limit, galleryView);
  });

  app.get('/v1/account/webhook-deliveries', { schema: ListDeliveriesSchema }, async (request) => {
    const { accountId } = requireCaller(request);
    const { task_id: taskRef } = request.query as { task_id?: string };
    const { limit, olderThan } = readPage(request.query);
    const task = taskRef === undefined ? undefined : await findAccountTask(db, { accountId, id: taskRef });
    if (taskRef !== undefined && !task) throw notFound(`task ${taskRef} not found`);
    const rows = await listAccountWebhooks(db, { accountId, taskId: task?.id, olderThan, limit: limit + 1 });
    return toPage(rows, limit, deliveryView);
  });

  /** The caller, when it may read or rotate the webhook secret: with it, one could forge any of the account's callbacks. */
  const secretHolder = (request: FastifyRequest) => {
    const caller = requireCaller(request);
    if (callerHasLimits(caller))
      throw forbidden('this API key has limits (its rpm included), so it may not read or rotate the webhook secret; use a key without limits');
    return caller;
  };

  // The secret goes to its owner only, never to a log (request lines carry no bodies) or a cache.
  app.get('/v1/account/webhook-secret', { schema: WebhookSecretSchema }, async (request, reply) => {
    const account = await callerAccount(secretHolder(request).accountId);
    reply.header('cache-control', 'no-store');
    return { secret: account.webhook_secret };
  });

  app.post('/v1/account/webhook-secret', { schema: RotateWebhookSecretSchema }, async (request, reply) => {
    const { accountId } = secretHolder(request);
    const secret = await rotateWebhookSecret(store, accountId);
    if (!secret) throw notFound(`account ${accountId} not found`);
    reply.header('cache-control', 'no-store');
    return { secret };
  });
};
