// The low-balance settings refuse what they cannot keep with a 400 naming the field, and only a
// key without limits may change them.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

describe('low-balance settings refused', () => {
  let gw: TestGateway;
  let key: string;
  let accountId: string;
  before(async () => {
    gw = await startTestGateway();
    ({ key, accountId } = await gw.account());
  });
  after(() => gw.close());

  const refusal = async (body: unknown) => {
    const answer = await gw.call(key, 'PATCH', '/v1/account/settings', body);
    assert.equal(answer.status, 400, JSON.stringify(answer.body));
    assert.equal(answer.body.type, 'invalid_request_error');
    return answer.body.error as string;
  };

  test('a negative threshold is refused, naming low_balance_micros', async () => {
    assert.match(await refusal({ low_balance_micros: -1 }), /^low_balance_micros: /);
  });

  test('a threshold that is not a whole number of micros is refused, naming low_balance_micros', async () => {
    assert.match(await refusal({ low_balance_micros: 1.5 }), /^low_balance_micros: /);
  });

  test('a webhook_url that is not an http(s) URL is refused, naming webhook_url', async () => {
    assert.equal(await refusal({ webhook_url: 'ftp://example.com/hook' }), 'webhook_url: must be an http(s) URL');
  });

  test('a webhook_url with credentials in it is refused, naming webhook_url', async () => {
    assert.equal(await refusal({ webhook_url: 'https://user:pw@example.com/hook' }), 'webhook_url: must not contain credentials');
  });

  test('an unknown field is refused, naming it', async () => {
    assert.equal(await refusal({ low_balance: 5 }), 'low_balance: unknown field');
  });

  test('a change that changes nothing is refused', async () => {
    await refusal({});
  });

  test('a refused change leaves the settings as they were', async () => {
    await gw.call(key, 'PATCH', '/v1/account/settings', { low_balance_micros: 7 });
    await refusal({ low_balance_micros: 9, webhook_url: 'not a url' });
    assert.equal((await gw.call(key, 'GET', '/v1/account/settings')).body.low_balance_micros, 7);
  });

  test('the operator’s negative threshold is refused, naming low_balance_micros', async () => {
    const answer = await gw.admin('PATCH', `/admin/accounts/${accountId}`, { low_balance_micros: -5 });
    assert.equal(answer.status, 400);
    assert.match(answer.body.error, /^low_balance_micros: /);
  });

  test('the operator’s threshold for an unknown account is a 404', async () => {
    const answer = await gw.admin('PATCH', '/admin/accounts/acct_nobody', { low_balance_micros: 5 });
    assert.equal(answer.status, 404);
  });

  test('a key with limits may read the settings but not change them', async () => {
    const limited = await gw.call(key, 'POST', '/v1/account/keys', { name: 'limited', rpm: 10 });
    assert.equal(limited.status, 201, JSON.stringify(limited.body));
    assert.equal((await gw.call(limited.body.key, 'GET', '/v1/account/settings')).status, 200);
    const change = await gw.call(limited.body.key, 'PATCH', '/v1/account/settings', { low_balance_micros: 1 });
    assert.equal(change.status, 403);
  });
});
