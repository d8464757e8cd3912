// The operator's side of low-balance notices (billing/low-balance.ts): an account's threshold, and
// the accounts below theirs now. Registered inside adminRoutes, so the admin token guards them.
import type { FastifyPluginAsync } from 'fastify';
import { lowBalanceAccountView } from '../../account/low-balance-views.js';
import { noticeLowBalances } from '../../billing/low-balance.js';
import { notFound } from '../../errors.js';
import { findLowBalanceState, listBelowThreshold, updateLowBalanceSettings } from '../../store/low-balance.js';
import type { Store } from '../../store/open.js';
import { readPage, toPage } from '../cursor.js';
import { AdminLowBalanceListSchema, AdminUpdateAccountSchema } from '../schemas/low-balance.js';
import { serializedAsBuilt } from '../serialized-as-built.js';

export const adminLowBalanceRoutes: FastifyPluginAsync<{ store: Store }> = async (app, { store }) => {
  // A static path: it wins over /admin/accounts/:id whatever the order of registration.
  app.get('/admin/accounts/low-balance', { schema: AdminLowBalanceListSchema, ...serializedAsBuilt }, async (request) => {
    const { limit, olderThan } = readPage(request.query);
    // One row more than the page: it only says whether another page follows (http/cursor.ts).
    const rows = await listBelowThreshold(store.db, { olderThan, limit: limit + 1 });
    return toPage(rows, limit, lowBalanceAccountView);
  });

  app.patch('/admin/accounts/:id', { schema: AdminUpdateAccountSchema, ...serializedAsBuilt }, async (request) => {
    const { id } = request.params as { id: string };
    const { low_balance_micros: thresholdMicros } = request.body as { low_balance_micros: number | null };
    if (!(await updateLowBalanceSettings(store.db, { accountId: id, thresholdMicros }))) throw notFound(`account ${id} not found`);
    // As the holder's own change: a crossing it makes (or ends) is told now.
    await noticeLowBalances(store, { accountId: id });
    return lowBalanceAccountView((await findLowBalanceState(store.db, id))!);
  });
};
