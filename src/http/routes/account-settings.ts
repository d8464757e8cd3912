// The account holder's settings (/v1/account/settings): the low-balance threshold and the URL the
// account's own events go to (billing/low-balance.ts). Registered by account.ts, inside its rate
// limit. A test key's settings are its test twin's, as the rest of the account API answers for it.
import type { FastifyPluginAsync } from 'fastify';
import { lowBalanceSettingsView } from '../../account/low-balance-views.js';
import { callerHasLimits } from '../../billing/key-limits.js';
import { noticeLowBalances } from '../../billing/low-balance.js';
import { forbidden, invalidRequest, notFound } from '../../errors.js';
import { parseUserUrl } from '../../net/url-policy.js';
import { findLowBalanceState, updateLowBalanceSettings } from '../../store/low-balance.js';
import type { Store } from '../../store/open.js';
import { requireCaller } from '../auth.js';
import { GetAccountSettingsSchema, UpdateAccountSettingsSchema } from '../schemas/low-balance.js';

interface SettingsBody {
  low_balance_micros?: number | null;
  webhook_url?: string | null;
}

export const accountSettingsRoutes: FastifyPluginAsync<{ store: Store }> = async (app, { store }) => {
  const db = store.db;

  const settingsOf = async (accountId: string) => {
    const row = await findLowBalanceState(db, accountId);
    if (!row) throw notFound(`account ${accountId} not found`);
    return lowBalanceSettingsView(row);
  };

  app.get('/v1/account/settings', { schema: GetAccountSettingsSchema }, async (request) => settingsOf(requireCaller(request).accountId));

  app.patch('/v1/account/settings', { schema: UpdateAccountSettingsSchema }, async (request) => {
    const caller = requireCaller(request);
    // Where the account's events go is the whole account's to say, as its keys and secret are.
    if (callerHasLimits(caller))
      throw forbidden('this API key has limits (its rpm included), so it may not change the account settings; use a key without limits');
    const { low_balance_micros: thresholdMicros, webhook_url: rawUrl } = request.body as SettingsBody;
    let webhookUrl = rawUrl;
    if (typeof rawUrl === 'string') {
      const parsed = parseUserUrl(rawUrl, 'webhook_url');
      if ('problem' in parsed) throw invalidRequest(parsed.problem);
      webhookUrl = parsed.url.href;
    }
    const row = await updateLowBalanceSettings(db, { accountId: caller.accountId, thresholdMicros, webhookUrl });
    if (!row) throw notFound(`account ${caller.accountId} not found`);
    // A threshold set above the funds is a crossing now, one lowered below them ends it: told at
    // once rather than at the next sweep.
    if (thresholdMicros !== undefined) await noticeLowBalances(store, { accountId: caller.accountId });
    return settingsOf(caller.accountId);
  });
};
