// The wrong-code limit: tries that credit nothing are counted per account and window in the store;
// past `redemption.wrong_codes_per_window` every try, a right code too, is answered 429 with
// Retry-After, without the code being looked up, until the window ends. Right codes cost nothing.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { makeBatch, startOfNextWindow } from './redemption-helpers.js';

const WINDOW_SECONDS = 2;
const redemption = { wrong_codes_per_window: 2, wrong_code_window_seconds: WINDOW_SECONDS };
const WRONG = { code: 'trc-ZZZZZZZZZZZZZZZZZZZZZZZZZZ' };

// Each test tries on an account of its own, and the limit is counted per account: the tests wait for
// their windows side by side.
describe('the wrong-code limit', { concurrency: true }, () => {
  let gw: TestGateway;
  let second: TestGateway;
  before(async () => {
    gw = await startTestGateway({ redemption });
    // A second instance on the same store, as two gateways share a database.
    second = await startTestGateway({ redemption, store: gw.storeUrl });
  });
  after(async () => {
    await second.close();
    await gw.close();
  });

  test('past the limit a right code is answered 429 with Retry-After, credits nothing, and credits once the window has passed', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 0 });
    const batch = await makeBatch(gw, { amount_micros: 1_234, count: 1 });
    await startOfNextWindow(WINDOW_SECONDS * 1_000);
    assert.equal((await gw.call(key, 'POST', '/v1/account/redemptions', WRONG)).status, 404);
    assert.equal((await gw.call(key, 'POST', '/v1/account/redemptions', WRONG)).status, 404);
    const res = await request(`${gw.url}/v1/account/redemptions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ code: batch.codes[0] }),
    });
    const refused = (await res.body.json()) as { error: string; type: string };
    assert.equal(res.statusCode, 429);
    assert.equal(refused.type, 'rate_limit_error');
    assert.match(refused.error, /^code: too many codes tried/);
    const retryAfter = Number(res.headers['retry-after']);
    assert.ok(retryAfter >= 1 && retryAfter <= WINDOW_SECONDS, `Retry-After ${retryAfter}`);
    assert.equal((await gw.balance(accountId)).balance_micros, 0);

    await new Promise((resolve) => setTimeout(resolve, retryAfter * 1_000));
    const redeemed = await gw.call(key, 'POST', '/v1/account/redemptions', { code: batch.codes[0] });
    assert.equal(redeemed.status, 200, JSON.stringify(redeemed.body));
    assert.equal(redeemed.body.balance_micros, 1_234);
  });

  test('tries counted on one instance are refused on the other', async () => {
    const { key } = await gw.account({ creditMicros: 0 });
    await startOfNextWindow(WINDOW_SECONDS * 1_000);
    assert.equal((await gw.call(key, 'POST', '/v1/account/redemptions', WRONG)).status, 404);
    assert.equal((await gw.call(key, 'POST', '/v1/account/redemptions', WRONG)).status, 404);
    assert.equal((await second.call(key, 'POST', '/v1/account/redemptions', WRONG)).status, 429);
  });

  test('codes that credit do not count against the limit', async () => {
    const { key } = await gw.account({ creditMicros: 0 });
    const batch = await makeBatch(gw, { amount_micros: 1, count: 3 });
    await startOfNextWindow(WINDOW_SECONDS * 1_000);
    assert.equal((await gw.call(key, 'POST', '/v1/account/redemptions', WRONG)).status, 404);
    for (const code of batch.codes) assert.equal((await gw.call(key, 'POST', '/v1/account/redemptions', { code })).status, 200);
    assert.equal((await gw.call(key, 'POST', '/v1/account/redemptions', WRONG)).status, 404, 'the second wrong try is still allowed');
    assert.equal((await gw.call(key, 'POST', '/v1/account/redemptions', WRONG)).status, 429);
  });

  test('a redeemed code tried again counts as a wrong try', async () => {
    const { key } = await gw.account({ creditMicros: 0 });
    const batch = await makeBatch(gw, { amount_micros: 1, count: 1 });
    await startOfNextWindow(WINDOW_SECONDS * 1_000);
    const code = { code: batch.codes[0] };
    assert.deepEqual(
      [
        (await gw.call(key, 'POST', '/v1/account/redemptions', code)).status,
        (await gw.call(key, 'POST', '/v1/account/redemptions', code)).status,
        (await gw.call(key, 'POST', '/v1/account/redemptions', code)).status,
        (await gw.call(key, 'POST', '/v1/account/redemptions', code)).status,
      ],
      [200, 409, 409, 429],
    );
  });

  test('one account past the limit leaves another account’s tries alone', async () => {
    const guesser = await gw.account({ creditMicros: 0 });
    const other = await gw.account({ creditMicros: 0 });
    const batch = await makeBatch(gw, { amount_micros: 8, count: 1 });
    await startOfNextWindow(WINDOW_SECONDS * 1_000);
    for (let i = 0; i < 3; i++) await gw.call(guesser.key, 'POST', '/v1/account/redemptions', WRONG);
    assert.equal((await gw.call(guesser.key, 'POST', '/v1/account/redemptions', WRONG)).status, 429);
    assert.equal((await gw.call(other.key, 'POST', '/v1/account/redemptions', { code: batch.codes[0] })).status, 200);
  });
});
