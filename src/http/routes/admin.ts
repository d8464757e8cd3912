// The operator's admin API (DESIGN section 8), guarded by the admin token.
import type { FastifyPluginAsync } from 'fastify';
import { accountView, ledgerView, usageView } from '../../admin/views.js';
import { issueApiKey } from '../../billing/api-keys.js';
import { createAccount, creditAccount, newWebhookSecret } from '../../billing/ledger.js';
import { notFound } from '../../errors.js';
import { findAccount, setWebhookSecret } from '../../store/accounts.js';
import { revokeApiKey } from '../../store/api-keys.js';
import { listLedger } from '../../store/ledger-rows.js';
import type { Store } from '../../store/open.js';
import { listUsage } from '../../store/usage.js';
import { adminTokenHook } from '../auth.js';
import type { KeyResolver } from '../key-resolver.js';
import { LimitParam, readLimit } from '../schemas/query.js';

const micros = { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER } as const;
const IdParams = { type: 'object', required: ['id'], properties: { id: { type: 'string', minLength: 1 } } } as const;
const ListQuery = { type: 'object', properties: { limit: LimitParam } } as const;

export const adminRoutes: FastifyPluginAsync<{ store: Store; keys: KeyResolver; adminToken: string }> = async (app, { store, keys, adminToken }) => {
  app.addHook('onRequest', adminTokenHook(adminToken));

  const accountOr404 = async (id: string) => {
    const account = await findAccount(store.db, id);
    if (!account) throw notFound(`account ${id} not found`);
    return account;
  };

  app.post('/admin/accounts', {
    schema: {
      body: {
        type: 'object',
        required: ['name'],
        additionalProperties: false,
        properties: { name: { type: 'string', minLength: 1, maxLength: 200 }, credit_micros: micros, overdraft_micros: micros },
      },
    },
    handler: async (request, reply) => {
      const { name, credit_micros, overdraft_micros } = request.body as { name: string; credit_micros?: number; overdraft_micros?: number };
      reply.code(201);
      return accountView(await createAccount(store, { name, creditMicros: credit_micros ?? 0, overdraftMicros: overdraft_micros ?? 0 }));
    },
  });

  app.get('/admin/accounts/:id', { schema: { params: IdParams } }, async (request) => {
    return accountView(await accountOr404((request.params as { id: string }).id));
  });

  app.post('/admin/accounts/:id/credit', {
    schema: {
      params: IdParams,
      body: {
        type: 'object',
        required: ['amount_micros'],
        additionalProperties: false,
        properties: { amount_micros: { ...micros, minimum: 1 }, note: { type: 'string', maxLength: 500 } },
      },
    },
    handler: async (request) => {
      const { amount_micros, note } = request.body as { amount_micros: number; note?: string };
      return accountView(await creditAccount(store, { accountId: (request.params as { id: string }).id, amountMicros: amount_micros, note }));
    },
  });

  app.post('/admin/accounts/:id/keys', {
    schema: {
      params: IdParams,
      body: {
        type: ['object', 'null'],
        additionalProperties: false,
        properties: { name: { type: 'string', maxLength: 200 }, rpm: { type: 'integer', minimum: 1 } },
      },
    },
    handler: async (request, reply) => {
      const account = await accountOr404((request.params as { id: string }).id);
      const { name, rpm } = (request.body ?? {}) as { name?: string; rpm?: number };
      const { key, row } = await issueApiKey(store, { accountId: account.id, name: name ?? null, rpm: rpm ?? null });
      reply.code(201);
      // The key is shown this once; only its hash is stored.
      return { id: row.id, key, prefix: row.prefix, name: row.name, rpm: row.rpm, created_at: new Date(row.created_at).toISOString() };
    },
  });

  app.delete('/admin/keys/:id', { schema: { params: IdParams } }, async (request) => {
    const { id } = request.params as { id: string };
    const revoked = await revokeApiKey(store.db, { keyId: id, now: Date.now() });
    if (!revoked) throw notFound(`key ${id} not found or already revoked`);
    keys.forgetKey(id);
    return { id, revoked: true };
  });

  app.get('/admin/accounts/:id/ledger', { schema: { params: IdParams, querystring: ListQuery } }, async (request) => {
    const account = await accountOr404((request.params as { id: string }).id);
    return { data: (await listLedger(store.db, { accountId: account.id, limit: readLimit(request.query) })).map(ledgerView) };
  });

  app.get('/admin/accounts/:id/usage', { schema: { params: IdParams, querystring: ListQuery } }, async (request) => {
    const account = await accountOr404((request.params as { id: string }).id);
    return { data: (await listUsage(store.db, { accountId: account.id, limit: readLimit(request.query) })).map(usageView) };
  });

  app.get('/admin/accounts/:id/webhook-secret', { schema: { params: IdParams } }, async (request) => {
    const account = await accountOr404((request.params as { id: string }).id);
    return { secret: account.webhook_secret };
  });

  app.post('/admin/accounts/:id/webhook-secret', { schema: { params: IdParams } }, async (request) => {
    const account = await accountOr404((request.params as { id: string }).id);
    const secret = newWebhookSecret();
    await setWebhookSecret(store.db, { accountId: account.id, secret });
    return { secret };
  });
};
