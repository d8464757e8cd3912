// The operator's admin API (DESIGN section 8), guarded by the admin token.
import type { FastifyPluginAsync } from 'fastify';
import type { ChannelsAdmin } from '../../admin/channels.js';
import type { Reload } from '../../admin/reload.js';
import { type AccessChange, endSessionsOf, resumeAccount, suspendAccount } from '../../admin/suspension.js';
import { accountView, iso, ledgerView, usageView } from '../../admin/views.js';
import { createAccount, creditAccount } from '../../billing/accounts.js';
import { issueApiKey } from '../../billing/api-keys.js';
import { creditTestFunds, testBalance, testTwin } from '../../billing/test-mode.js';
import { rotateWebhookSecret } from '../../billing/webhook-secret.js';
import { issueLoginLink } from '../../console/login-links.js';
import { conflict, invalidRequest, notFound } from '../../errors.js';
import type { Pipeline } from '../../pipeline/metered-call.js';
import { type AccountRow, findAccount } from '../../store/accounts.js';
import { revokeApiKey } from '../../store/api-keys.js';
import { listLedger } from '../../store/ledger-rows.js';
import type { Store } from '../../store/open.js';
import { listUsage } from '../../store/usage.js';
import { adminTokenHook } from '../auth.js';
import type { KeyResolver } from '../key-resolver.js';
import {
  AdminRotateWebhookSecretSchema,
  AdminUsageSchema,
  AdminWebhookSecretSchema,
  CreateAccountSchema,
  CreditAccountSchema,
  EndSessionsSchema,
  GetAccountSchema,
  IssueKeySchema,
  IssueTestKeySchema,
  LedgerSchema,
  LoginLinkSchema,
  ReloadSchema,
  ResumeAccountSchema,
  RevokeKeySchema,
  SuspendAccountSchema,
  TestCreditSchema,
} from '../schemas/admin.js';
import { readLimit } from '../schemas/query.js';
import { serializedAsBuilt } from '../serialized-as-built.js';
import { adminLowBalanceRoutes } from './admin-low-balance.js';
import { adminPriceRoutes } from './admin-prices.js';
import { adminRedemptionRoutes } from './admin-redemption.js';
import { adminViewRoutes } from './admin-views.js';

export interface AdminRouteDeps {
  store: Store;
  keys: KeyResolver;
  adminToken: string;
  /** Where console sign-in links point, and how long one may wait to be used. */
  loginLinks: { publicUrl: string; ttlMs: number };
  /** The channels and their live state, for GET /admin/channels. */
  channels: ChannelsAdmin;
  /** Reads the configuration file again (admin/reload.ts). */
  reload: Reload;
  /** The catalogue and the price book, for plans and price changes. */
  pipeline: Pipeline;
}

export const adminRoutes: FastifyPluginAsync<AdminRouteDeps> = async (app, { store, keys, adminToken, loginLinks, channels, reload, pipeline }) => {
  app.addHook('onRequest', adminTokenHook(adminToken));
  // The lists the console's operator view reads; registered here so the hook above guards them.
  await app.register(adminViewRoutes, { store, channels });
  await app.register(adminLowBalanceRoutes, { store });
  await app.register(adminRedemptionRoutes, { store });
  await app.register(adminPriceRoutes, { store, pipeline });

  const accountOr404 = async (id: string) => {
    const account = await findAccount(store.db, id);
    if (!account) throw notFound(`account ${id} not found`);
    return account;
  };

  app.post('/admin/accounts', {
    schema: CreateAccountSchema,
    ...serializedAsBuilt,
    handler: async (request, reply) => {
      const { name, credit_micros, overdraft_micros } = request.body as { name: string; credit_micros?: number; overdraft_micros?: number };
      reply.code(201);
      return accountView(await createAccount(store, { name, creditMicros: credit_micros ?? 0, overdraftMicros: overdraft_micros ?? 0 }));
    },
  });

  /** The account with its test balance beside the live one (a twin shows its own, and none). */
  const withTestBalance = async (account: AccountRow) => ({
    ...accountView(account),
    suspended_at: account.suspended_at === null ? null : iso(account.suspended_at),
    ...(account.livemode === 0 ? { test_balance_micros: 0, test_held_micros: 0 } : await testBalance(store, account.id)),
  });

  app.get('/admin/accounts/:id', { schema: GetAccountSchema, ...serializedAsBuilt }, async (request) => {
    return withTestBalance(await accountOr404((request.params as { id: string }).id));
  });

  app.post('/admin/accounts/:id/test-credit', {
    schema: TestCreditSchema,
    ...serializedAsBuilt,
    handler: async (request) => {
      const { id } = request.params as { id: string };
      const { amount_micros, note } = request.body as { amount_micros: number; note?: string };
      await creditTestFunds(store, { accountId: id, amountMicros: amount_micros, note });
      return withTestBalance(await accountOr404(id));
    },
  });

  app.post('/admin/accounts/:id/test-keys', {
    schema: IssueTestKeySchema,
    ...serializedAsBuilt,
    handler: async (request, reply) => {
      const twin = await testTwin(store, (request.params as { id: string }).id);
      const { name, rpm } = (request.body ?? {}) as { name?: string; rpm?: number };
      const { key, row } = await issueApiKey(store, { accountId: twin.id, name: name ?? null, rpm: rpm ?? null, test: true });
      reply.code(201);
      // Shown this once, like a live key; it is a key of the twin, so its calls draw on the test balance.
      return { id: row.id, key, prefix: row.prefix, name: row.name, rpm: row.rpm, created_at: new Date(row.created_at).toISOString() };
    },
  });

  app.post('/admin/accounts/:id/credit', {
    schema: CreditAccountSchema,
    ...serializedAsBuilt,
    handler: async (request) => {
      const { amount_micros, note } = request.body as { amount_micros: number; note?: string };
      return accountView(await creditAccount(store, { accountId: (request.params as { id: string }).id, amountMicros: amount_micros, note }));
    },
  });

  app.post('/admin/accounts/:id/keys', {
    schema: IssueKeySchema,
    ...serializedAsBuilt,
    handler: async (request, reply) => {
      const account = await accountOr404((request.params as { id: string }).id);
      const { name, rpm } = (request.body ?? {}) as { name?: string; rpm?: number };
      // A key on a test twin is a test key, whichever route issued it: its prefix says what it is.
      const { key, row } = await issueApiKey(store, { accountId: account.id, name: name ?? null, rpm: rpm ?? null, test: account.livemode === 0 });
      reply.code(201);
      // The key is shown this once; only its hash is stored.
      return { id: row.id, key, prefix: row.prefix, name: row.name, rpm: row.rpm, created_at: new Date(row.created_at).toISOString() };
    },
  });

  // A one-time link that signs the account's holder in to the console; the token is shown this once.
  app.post('/admin/accounts/:id/login-links', { schema: LoginLinkSchema, ...serializedAsBuilt }, async (request, reply) => {
    const account = await accountOr404((request.params as { id: string }).id);
    // The console is live only (docs/api.md "Test mode"): a test twin's holder signs in to its live account.
    if (account.livemode === 0) throw invalidRequest(`account ${account.id} is a test account; issue the link for its live account ${account.live_account_id}`);
    const link = await issueLoginLink(store, { accountId: account.id, ...loginLinks });
    reply.code(201).header('cache-control', 'no-store');
    return { url: link.url, expires_at: iso(link.expiresAt) };
  });

  app.delete('/admin/keys/:id', { schema: RevokeKeySchema, ...serializedAsBuilt }, async (request) => {
    const { id } = request.params as { id: string };
    const revoked = await revokeApiKey(store.db, { keyId: id, now: Date.now() });
    if (!revoked) throw notFound(`key ${id} not found or already revoked`);
    keys.forgetKey(id);
    return { id, revoked: true };
  });

  /** A live account (a twin's access goes with its live account's), for the access calls below. */
  const liveAccountOr404 = async (id: string) => {
    const account = await accountOr404(id);
    if (account.livemode === 0) throw invalidRequest(`account ${account.id} is a test account; act on its live account ${account.live_account_id}`);
    return account;
  };
  /** This instance reads the accounts' keys afresh from their next request; others within a second (key-resolver.ts). */
  const accessChanged = (change: AccessChange | undefined, id: string) => {
    if (!change) throw notFound(`account ${id} not found`);
    keys.refreshAccounts(change.accountIds);
    return change;
  };

  app.post('/admin/accounts/:id/suspend', { schema: SuspendAccountSchema, ...serializedAsBuilt }, async (request) => {
    const { id } = await liveAccountOr404((request.params as { id: string }).id);
    const change = accessChanged(await suspendAccount(store, { accountId: id, now: Date.now() }), id);
    const account = await accountOr404(id);
    return { id, suspended_at: iso(account.suspended_at!), sessions_ended: change.sessionsEnded };
  });

  app.post('/admin/accounts/:id/resume', { schema: ResumeAccountSchema, ...serializedAsBuilt }, async (request) => {
    const { id } = await liveAccountOr404((request.params as { id: string }).id);
    accessChanged(await resumeAccount(store, { accountId: id }), id);
    return { id, suspended_at: null, sessions_ended: 0 };
  });

  app.delete('/admin/accounts/:id/sessions', { schema: EndSessionsSchema, ...serializedAsBuilt }, async (request) => {
    const account = await liveAccountOr404((request.params as { id: string }).id);
    const ended = await endSessionsOf(store, { accountId: account.id, now: Date.now() });
    return { id: account.id, suspended_at: account.suspended_at === null ? null : iso(account.suspended_at), sessions_ended: ended };
  });

  app.get('/admin/accounts/:id/ledger', { schema: LedgerSchema, ...serializedAsBuilt }, async (request) => {
    const account = await accountOr404((request.params as { id: string }).id);
    return { data: (await listLedger(store, { accountId: account.id, limit: readLimit(request.query) })).map(ledgerView) };
  });

  app.get('/admin/accounts/:id/usage', { schema: AdminUsageSchema, ...serializedAsBuilt }, async (request) => {
    const account = await accountOr404((request.params as { id: string }).id);
    return {
      data: (await listUsage(store.db, { accountId: account.id, limit: readLimit(request.query) })).map((row) => usageView(row, account.livemode !== 0)),
    };
  });

  app.get('/admin/accounts/:id/webhook-secret', { schema: AdminWebhookSecretSchema, ...serializedAsBuilt }, async (request) => {
    const account = await accountOr404((request.params as { id: string }).id);
    return { secret: account.webhook_secret };
  });

  app.post('/admin/accounts/:id/webhook-secret', { schema: AdminRotateWebhookSecretSchema, ...serializedAsBuilt }, async (request) => {
    const { id } = request.params as { id: string };
    const secret = await rotateWebhookSecret(store, id);
    if (!secret) throw notFound(`account ${id} not found`);
    return { secret };
  });

  // The same as SIGHUP: a refused file changes nothing, and the answer names the field at fault.
  app.post('/admin/reload', { schema: ReloadSchema, ...serializedAsBuilt }, async () => {
    const outcome = reload();
    if (!outcome.ok) throw outcome.status === 409 ? conflict(outcome.message) : invalidRequest(outcome.message);
    const { ok: _, ...answer } = outcome;
    return answer;
  });
};
