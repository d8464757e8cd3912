// Redeeming a code (POST /v1/account/redemptions): the account is credited the code's amount
// exactly once, with one ledger row naming the batch and never the code; a redeemed, expired or
// unknown code, or a test key, credits nothing.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { checkAccountBalance } from '../../src/billing/accounts.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { ledgerOf, makeBatch } from './redemption-helpers.js';

describe('redeeming a code', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway();
  });
  after(() => gw.close());

  test('a code credits exactly its amount, answers the new balance, and the ledger still sums to the balance', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_001 });
    const batch = await makeBatch(gw, { amount_micros: 3_333_333, count: 2 });
    const redeemed = await gw.call(key, 'POST', '/v1/account/redemptions', { code: batch.codes[0] });
    assert.equal(redeemed.status, 200, JSON.stringify(redeemed.body));
    assert.deepEqual(redeemed.body, { amount_micros: 3_333_333, balance_micros: 4_333_334, batch_id: batch.id });
    assert.equal((await gw.balance(accountId)).balance_micros, 4_333_334);
    assert.equal((await checkAccountBalance(gw.gateway.store, accountId)).consistent, true);
  });

  test('a redemption writes one credit row naming the batch, never the code', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 0 });
    const batch = await makeBatch(gw, { amount_micros: 42, count: 1 });
    assert.equal((await gw.call(key, 'POST', '/v1/account/redemptions', { code: batch.codes[0] })).status, 200);
    const rows = await ledgerOf(gw, accountId);
    assert.deepEqual(
      rows.map(({ kind, amount_micros, note }) => ({ kind, amount_micros, note })),
      [{ kind: 'credit', amount_micros: 42, note: `redemption code batch ${batch.id}` }],
    );
    assert.ok(!gw.logText().includes(batch.codes[0]!.slice(4)), 'the code is never logged');
  });

  test('a code typed in lower case with spaces around it is the same code', async () => {
    const { key } = await gw.account({ creditMicros: 0 });
    const batch = await makeBatch(gw, { amount_micros: 5, count: 1 });
    const redeemed = await gw.call(key, 'POST', '/v1/account/redemptions', { code: `  ${batch.codes[0]!.toLowerCase()} ` });
    assert.equal(redeemed.status, 200, JSON.stringify(redeemed.body));
    assert.equal(redeemed.body.balance_micros, 5);
  });

  test('a second redemption of the same code is refused with 409 and credits nothing', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 0 });
    const batch = await makeBatch(gw, { amount_micros: 1_000_000, count: 1 });
    assert.equal((await gw.call(key, 'POST', '/v1/account/redemptions', { code: batch.codes[0] })).status, 200);
    const again = await gw.call(key, 'POST', '/v1/account/redemptions', { code: batch.codes[0] });
    assert.deepEqual(again, { status: 409, body: { error: 'code: this code has already been redeemed', type: 'invalid_request_error' } });
    assert.equal((await gw.balance(accountId)).balance_micros, 1_000_000);
    assert.equal((await ledgerOf(gw, accountId)).length, 1);
  });

  test('a code another account redeemed is refused with 409 and credits nothing', async () => {
    const first = await gw.account({ creditMicros: 0 });
    const second = await gw.account({ creditMicros: 0 });
    const batch = await makeBatch(gw, { amount_micros: 9, count: 1 });
    assert.equal((await gw.call(first.key, 'POST', '/v1/account/redemptions', { code: batch.codes[0] })).status, 200);
    assert.equal((await gw.call(second.key, 'POST', '/v1/account/redemptions', { code: batch.codes[0] })).status, 409);
    assert.equal((await gw.balance(second.accountId)).balance_micros, 0);
    assert.deepEqual(await ledgerOf(gw, second.accountId), []);
  });

  test('an expired code is refused with 409 and credits nothing', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 0 });
    const batch = await makeBatch(gw, { amount_micros: 10, count: 1, expires_at: new Date(Date.now() + 300).toISOString() });
    await new Promise((resolve) => setTimeout(resolve, 400));
    const late = await gw.call(key, 'POST', '/v1/account/redemptions', { code: batch.codes[0] });
    assert.deepEqual(late, { status: 409, body: { error: 'code: this code has expired', type: 'invalid_request_error' } });
    assert.equal((await gw.balance(accountId)).balance_micros, 0);
  });

  test('an unknown code is answered 404 and credits nothing', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 0 });
    const unknown = await gw.call(key, 'POST', '/v1/account/redemptions', { code: 'trc-0000000000000000000000000A' });
    assert.deepEqual(unknown, { status: 404, body: { error: 'code: no such redemption code', type: 'not_found_error' } });
    assert.equal((await gw.balance(accountId)).balance_micros, 0);
  });

  test('a test key cannot redeem a code, which stays redeemable by a live key', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 0 });
    const testKey = (await gw.admin('POST', `/admin/accounts/${accountId}/test-keys`, {})).body.key as string;
    const batch = await makeBatch(gw, { amount_micros: 77, count: 1 });
    const refused = await gw.call(testKey, 'POST', '/v1/account/redemptions', { code: batch.codes[0] });
    assert.equal(refused.status, 403);
    assert.match(refused.body.error, /^code: a test key cannot redeem codes/);
    const account = await gw.balance(accountId);
    assert.deepEqual([account.balance_micros, (account as { test_balance_micros?: number }).test_balance_micros], [0, 0]);
    assert.equal((await gw.call(key, 'POST', '/v1/account/redemptions', { code: batch.codes[0] })).body.balance_micros, 77);
  });

  test('a credit the balance cannot take rolls the claim back: nothing credited, and the code stays redeemable', async () => {
    const full = await gw.account({ creditMicros: Number.MAX_SAFE_INTEGER - 10 });
    const other = await gw.account({ creditMicros: 0 });
    const batch = await makeBatch(gw, { amount_micros: 100, count: 1 });
    const refused = await gw.call(full.key, 'POST', '/v1/account/redemptions', { code: batch.codes[0] });
    assert.equal(refused.status, 400);
    assert.match(refused.body.error, /^code: the balance would pass/);
    assert.equal((await gw.balance(full.accountId)).balance_micros, Number.MAX_SAFE_INTEGER - 10);
    assert.equal((await ledgerOf(gw, full.accountId)).length, 1, 'the opening credit only');
    assert.equal((await gw.call(other.key, 'POST', '/v1/account/redemptions', { code: batch.codes[0] })).body.balance_micros, 100);
  });

  test('a request without a code is refused with a 400 naming code', async () => {
    const { key } = await gw.account();
    const refused = await gw.call(key, 'POST', '/v1/account/redemptions', {});
    assert.equal(refused.status, 400);
    assert.match(refused.body.error, /code/);
  });
});
