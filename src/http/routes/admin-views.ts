// The admin API's lists behind the console's operator view. Registered inside adminRoutes, so the
// admin token guards them as it guards the rest of /admin.
import type { FastifyPluginAsync } from 'fastify';
import { keyViewsWithSpend } from '../../account/key-views.js';
import type { ChannelsAdmin } from '../../admin/channels.js';
import { accountView, iso } from '../../admin/views.js';
import { notFound } from '../../errors.js';
import { findAccount, listAccounts } from '../../store/accounts.js';
import { listAccountKeys } from '../../store/api-keys.js';
import { type LoginLinkListRow, listAccountLoginLinks } from '../../store/login-links.js';
import type { Store } from '../../store/open.js';
import { readPage, toPage } from '../cursor.js';
import {
  AdminListKeysSchema,
  DisableChannelSchema,
  EnableChannelSchema,
  ListAccountsSchema,
  ListChannelsSchema,
  ListLoginLinksSchema,
} from '../schemas/admin-views.js';
import { DEFAULT_PAGE_LIMIT, readLimit } from '../schemas/query.js';
import { serializedAsBuilt } from '../serialized-as-built.js';

export interface AdminViewDeps {
  store: Store;
  /** What the channels look like now (admin/channels.ts), read on every request, and the operator's switch. */
  channels: ChannelsAdmin;
}

const linkView = (now: number) => (row: LoginLinkListRow) => ({
  id: row.id,
  created_at: iso(row.created_at),
  expires_at: iso(row.expires_at),
  used_at: row.used_at === null ? null : iso(row.used_at),
  state: row.used_at !== null ? 'used' : row.expires_at <= now ? 'expired' : 'unused',
});

export const adminViewRoutes: FastifyPluginAsync<AdminViewDeps> = async (app, { store, channels }) => {
  const accountOr404 = async (id: string) => {
    const account = await findAccount(store.db, id);
    if (!account) throw notFound(`account ${id} not found`);
    return account;
  };

  app.get('/admin/accounts', { schema: ListAccountsSchema, ...serializedAsBuilt }, async (request) => {
    const { limit, olderThan } = readPage(request.query);
    const { name } = request.query as { name?: string };
    // One row more than the page: it only says whether another page follows (http/cursor.ts).
    const rows = await listAccounts(store.db, { nameContains: name, olderThan, limit: limit + 1 });
    return toPage(rows, limit, accountView);
  });

  app.get('/admin/accounts/:id/keys', { schema: AdminListKeysSchema, ...serializedAsBuilt }, async (request) => {
    const account = await accountOr404((request.params as { id: string }).id);
    return { data: await keyViewsWithSpend(store.db, await listAccountKeys(store.db, { accountId: account.id })) };
  });

  app.get('/admin/accounts/:id/login-links', { schema: ListLoginLinksSchema, ...serializedAsBuilt }, async (request) => {
    const account = await accountOr404((request.params as { id: string }).id);
    const rows = await listAccountLoginLinks(store.db, { accountId: account.id, limit: readLimit(request.query) ?? DEFAULT_PAGE_LIMIT });
    return { data: rows.map(linkView(Date.now())) };
  });

  app.get('/admin/channels', { schema: ListChannelsSchema, ...serializedAsBuilt }, async () => channels.view());

  // In force at once on this instance only: each instance keeps its own view of its channels.
  const steer = (disabled: boolean) => async (request: { params: unknown }) => {
    const { name } = request.params as { name: string };
    const channel = channels.setDisabled(name, disabled);
    if (!channel) throw notFound(`channel ${name} not found`);
    return channel;
  };
  app.post('/admin/channels/:name/disable', { schema: DisableChannelSchema, ...serializedAsBuilt }, steer(true));
  app.post('/admin/channels/:name/enable', { schema: EnableChannelSchema, ...serializedAsBuilt }, steer(false));
};
