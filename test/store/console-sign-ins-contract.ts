// The queries behind console sign-in (login links, sessions and their sweep), run on SQLite by
// console-sign-ins-sqlite.test.ts and on PostgreSQL by console-sign-ins-postgres.test.ts.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { resumeAccount, suspendAccount } from '../../src/admin/suspension.js';
import { createAccount } from '../../src/billing/accounts.js';
import { issueApiKey } from '../../src/billing/api-keys.js';
import { testTwin } from '../../src/billing/test-mode.js';
import { deleteExpiredSignIns, KEEP_EXPIRED_SIGN_INS_MS } from '../../src/console/sweep.js';
import { findAccount } from '../../src/store/accounts.js';
import { revokeApiKey } from '../../src/store/api-keys.js';
import { findLoginLinkByHash, insertLoginLink, redeemLoginLink } from '../../src/store/login-links.js';
import { endSession, findSession, insertSession } from '../../src/store/sessions.js';
import { type StoreUrls, storePerTest } from './store-context.js';

// The limits of a key without any, as a session reads them with its key.
const NO_KEY_LIMITS = { key_allowed_models: null, key_daily_cap_micros: null, key_monthly_cap_micros: null, key_expires_at: null };

const T0 = 1_700_000_000_000;
const link = (accountId: string, id: string, expiresAt = T0 + 1_000) => ({
  id,
  account_id: accountId,
  token_hash: `hash-${id}`,
  created_at: T0,
  expires_at: expiresAt,
  used_at: null,
});
const session = (accountId: string, id: string, made: { link_id?: string; key_id?: string }, expiresAt = T0 + 1_000) => ({
  id,
  account_id: accountId,
  created_at: T0,
  expires_at: expiresAt,
  ended_at: null,
  link_id: made.link_id ?? null,
  key_id: made.key_id ?? null,
});

export function runConsoleSignInsContract(label: string, makeUrl: StoreUrls): void {
  describe(`console sign-in queries on ${label}`, () => {
    const ctx = storePerTest(makeUrl);
    const db = () => ctx.store().db;
    const account = async () => (await createAccount(ctx.store(), { name: 'acct', now: 1 })).id;

    test('of two redemptions of one link at once exactly one gets it, and the row says when', async () => {
      const accountId = await account();
      await insertLoginLink(db(), link(accountId, 'link_1'));
      const redeemed = await Promise.all([
        redeemLoginLink(db(), { tokenHash: 'hash-link_1', now: T0 + 5 }),
        redeemLoginLink(db(), { tokenHash: 'hash-link_1', now: T0 + 6 }),
      ]);
      assert.equal(redeemed.filter(Boolean).length, 1);
      assert.equal((await findLoginLinkByHash(db(), 'hash-link_1'))?.used_at, redeemed.find(Boolean)?.used_at);
    });

    test('a link is not redeemed at or after its expiry', async () => {
      const accountId = await account();
      await insertLoginLink(db(), link(accountId, 'link_1'));
      assert.equal(await redeemLoginLink(db(), { tokenHash: 'hash-link_1', now: T0 + 1_000 }), undefined);
      assert.deepEqual(await findLoginLinkByHash(db(), 'hash-link_1'), link(accountId, 'link_1'));
    });

    test('a session reads back with its key’s revocation and rpm; a link’s session has neither', async () => {
      const accountId = await account();
      const { row: key } = await issueApiKey(ctx.store(), { accountId, rpm: 9, now: T0 });
      await insertSession(db(), session(accountId, 'ses_key', { key_id: key.id }));
      await insertSession(db(), session(accountId, 'ses_link', { link_id: 'link_1' }));
      await revokeApiKey(db(), { keyId: key.id, now: T0 + 7 });
      assert.deepEqual(await findSession(db(), 'ses_key'), {
        ...session(accountId, 'ses_key', { key_id: key.id }),
        account_suspended_at: null,
        key_revoked_at: T0 + 7,
        key_rpm: 9,
        ...NO_KEY_LIMITS,
      });
      assert.deepEqual(await findSession(db(), 'ses_link'), {
        ...session(accountId, 'ses_link', { link_id: 'link_1' }),
        account_suspended_at: null,
        key_revoked_at: null,
        key_rpm: null,
        ...NO_KEY_LIMITS,
      });
      assert.equal(await findSession(db(), 'ses_none'), undefined);
    });

    test('a session ends once: the first end time stands', async () => {
      const accountId = await account();
      await insertSession(db(), session(accountId, 'ses_1', { link_id: 'link_1' }));
      assert.equal(await endSession(db(), { id: 'ses_1', now: T0 + 1 }), true);
      assert.equal(await endSession(db(), { id: 'ses_1', now: T0 + 2 }), false);
      assert.equal((await findSession(db(), 'ses_1'))?.ended_at, T0 + 1);
    });

    test('a suspension ends the running sessions of the account and of its test twin, and is read with them until resumed', async () => {
      const accountId = await account();
      const twin = await testTwin(ctx.store(), accountId);
      await insertSession(db(), session(accountId, 'ses_live', { link_id: 'link_1' }));
      await insertSession(db(), session(twin.id, 'ses_twin', { link_id: 'link_2' }));
      await insertSession(db(), session(accountId, 'ses_expired', { link_id: 'link_3' }, T0 + 5));
      const other = await account();
      await insertSession(db(), session(other, 'ses_other', { link_id: 'link_4' }));
      const change = await suspendAccount(ctx.store(), { accountId, now: T0 + 10 });
      assert.deepEqual({ ids: change?.accountIds.sort(), ended: change?.sessionsEnded }, { ids: [accountId, twin.id].sort(), ended: 2 });
      // A second suspension keeps the first time.
      await suspendAccount(ctx.store(), { accountId, now: T0 + 20 });
      const live = await findSession(db(), 'ses_live');
      assert.deepEqual([live?.ended_at, live?.account_suspended_at], [T0 + 10, T0 + 10]);
      assert.equal((await findSession(db(), 'ses_other'))?.ended_at, null);
      assert.equal((await findSession(db(), 'ses_expired'))?.ended_at, null);
      await resumeAccount(ctx.store(), { accountId });
      assert.deepEqual([(await findAccount(db(), accountId))?.suspended_at, (await findAccount(db(), twin.id))?.suspended_at], [null, null]);
      assert.equal(await suspendAccount(ctx.store(), { accountId: 'acct_none', now: T0 }), undefined);
    });

    test('the sweep deletes links and sessions that expired over a day ago, and keeps the rest', async () => {
      const accountId = await account();
      const now = T0 + KEEP_EXPIRED_SIGN_INS_MS + 1_000;
      await insertLoginLink(db(), link(accountId, 'link_old', T0 + 999));
      await insertLoginLink(db(), link(accountId, 'link_kept', T0 + 1_000));
      await insertSession(db(), session(accountId, 'ses_old', { link_id: 'link_old' }, T0 + 999));
      await insertSession(db(), session(accountId, 'ses_kept', { link_id: 'link_kept' }, T0 + 1_000));
      assert.equal(await deleteExpiredSignIns(ctx.store(), now), 2);
      assert.deepEqual(await db().selectFrom('console_login_links').select('id').execute(), [{ id: 'link_kept' }]);
      assert.deepEqual(await db().selectFrom('console_sessions').select('id').execute(), [{ id: 'ses_kept' }]);
    });
  });
}
