// Test money (docs/api.md "Test mode"): a live account's test balance is a second accounts row, its
// test twin, made on first need. Holds, settles, ledger rows and key limits then work on test money
// exactly as on live money, and the two balances can never mix: they are different rows.
import { invalidRequest, notFound } from '../errors.js';
import { type AccountRow, findAccount, findTestTwin, insertTestTwinIfAbsent } from '../store/accounts.js';
import { newId } from '../store/ids.js';
import type { Store } from '../store/open.js';
import { creditAccount, newWebhookSecret } from './accounts.js';

/** The live account, or a 404; a test twin named here is a 400 (its live account is the one to name). */
async function liveAccount(store: Store, accountId: string): Promise<AccountRow> {
  const account = await findAccount(store.db, accountId);
  if (!account) throw notFound(`account ${accountId} not found`);
  if (account.livemode === 0) throw invalidRequest(`account ${accountId} is a test account; name its live account ${account.live_account_id}`);
  return account;
}

/**
 * The live account's test twin, made if it has none. Concurrent first uses make one: the losing
 * insert does nothing (a unique index) and both read the winner's row.
 */
export async function testTwin(store: Store, liveAccountId: string, now = Date.now()): Promise<AccountRow> {
  const live = await liveAccount(store, liveAccountId);
  const existing = await findTestTwin(store.db, live.id);
  if (existing) return existing;
  await insertTestTwinIfAbsent(store.db, {
    id: newId('acct'),
    name: `${live.name} (test)`,
    balance_micros: 0,
    held_micros: 0,
    // Its own secret, as payment APIs do: a test key reads it at GET /v1/account/webhook-secret.
    webhook_secret: newWebhookSecret(),
    created_at: now,
    overdraft_micros: 0,
    livemode: 0,
    live_account_id: live.id,
    // Made while its live account is suspended, it is suspended with it (admin/suspension.ts).
    suspended_at: live.suspended_at,
  });
  return (await findTestTwin(store.db, live.id))!;
}

/** Credits the test balance: "freely", with no rule but the ledger's own (whole, positive micros). */
export async function creditTestFunds(
  store: Store,
  { accountId, amountMicros, note }: { accountId: string; amountMicros: number; note?: string },
): Promise<AccountRow> {
  const twin = await testTwin(store, accountId);
  return creditAccount(store, { accountId: twin.id, amountMicros, note });
}

/** The test balance as the operator sees it beside the live one: zero before the twin exists. */
export async function testBalance(store: Store, liveAccountId: string): Promise<{ test_balance_micros: number; test_held_micros: number }> {
  const twin = await findTestTwin(store.db, liveAccountId);
  return { test_balance_micros: twin?.balance_micros ?? 0, test_held_micros: twin?.held_micros ?? 0 };
}
