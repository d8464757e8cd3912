// POST /v1/search end to end: routing by Type or model, bounds, per-call billing.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

describe('search', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway();
  });
  after(() => gw.close());
  beforeEach(async () => {
    await gw.sandboxControl('DELETE', '/__sandbox/faults');
    await gw.sandboxControl('DELETE', '/__sandbox/requests');
  });

  test('Type and model are never sent upstream nor written into the result', async () => {
    const { key } = await gw.account();
    const { body } = await gw.call(key, 'POST', '/v1/search', { Type: 'web', Query: 'bridges', Count: 3 });
    const [sent] = (await gw.sandboxControl('GET', '/__sandbox/requests')).data;
    assert.deepEqual(sent.body, { Query: 'bridges', SearchType: 'web', Count: 3 });
    assert.equal(sent.headers.authorization, 'Bearer sk-sandbox');
    assert.ok(!('Type' in body) && !('model' in body));
    assert.ok(!JSON.stringify(body).includes('"Type"'));
  });

  test('Type global routes to vendor-global-search and its own product', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 100_000 });
    const { status, body } = await gw.call(key, 'POST', '/v1/search', { Type: 'global', Query: 'tolls', Count: 4 });
    assert.equal(status, 200);
    assert.equal(body.Result.Documents.length, 4);
    const [sent] = (await gw.sandboxControl('GET', '/__sandbox/requests')).data;
    assert.equal(sent.path, '/search_api/global_search');
    assert.equal((await gw.settled(accountId)).balance_micros, 100_000 - 10_000);
  });

  test('a global search whose Count passes the 20 documents it returns says it was capped', async () => {
    const { key } = await gw.account();
    const { status, body } = await gw.call(key, 'POST', '/v1/search', { Type: 'global', Query: 'tolls', Count: 30 });
    assert.equal(status, 200);
    const [sent] = (await gw.sandboxControl('GET', '/__sandbox/requests')).data;
    assert.equal(sent.body.DocCount, 20);
    assert.deepEqual(body.CountCapped, { Requested: 30, Sent: 20 });
    assert.equal(body.Result.Documents.length, 20);
  });

  test('a search whose Count is within what the product returns says nothing of a cap', async () => {
    const { key } = await gw.account();
    for (const Type of ['global', 'web']) {
      const { body } = await gw.call(key, 'POST', '/v1/search', { Type, Query: 'tolls', Count: 20 });
      assert.ok(!('CountCapped' in body), Type);
    }
  });

  test('an explicit search model routes too', async () => {
    const { key } = await gw.account();
    const { status, body } = await gw.call(key, 'POST', '/v1/search', { model: 'vendor-web-search', Query: 'q', Count: 50 });
    assert.equal(status, 200);
    assert.equal(body.Result.WebResults.length, 50);
  });

  for (const [name, body, message] of [
    ['Count above 50', { Type: 'web', Query: 'q', Count: 51 }, 'Count: must be <= 50'],
    ['Count below 1', { Type: 'web', Query: 'q', Count: 0 }, 'Count: must be >= 1'],
    ['SearchType image', { Type: 'web', Query: 'q', SearchType: 'image' }, 'SearchType: image search is not supported; use web'],
    ['no Query', { Type: 'web' }, 'Query field is required'],
    ['no Type nor model', { Query: 'q' }, 'model field is required'],
    ['a model of another type', { model: 'sandbox-chat', Query: 'q' }, 'model sandbox-chat is not a search model'],
    [
      'a model that disagrees with Type',
      { Type: 'web', model: 'vendor-global-search', Query: 'q' },
      'model: vendor-global-search disagrees with Type web (vendor-web-search)',
    ],
  ] as const) {
    test(`${name} is refused with 400 and nothing charged`, async () => {
      const { accountId, key } = await gw.account({ creditMicros: 100_000 });
      assert.deepEqual(await gw.call(key, 'POST', '/v1/search', body), { status: 400, body: { error: message, type: 'invalid_request_error' } });
      assert.equal((await gw.balance(accountId)).balance_micros, 100_000);
    });
  }

  // The sandbox answers as the real upstream does: HTTP 200, ResponseMetadata.Error code 10400 (ParamError).
  for (const [edition, reason] of [
    ['web', 'query or search type is empty'],
    ['global', 'query is empty'],
  ] as const) {
    test(`a blank Query the ${edition} upstream refuses with its parameter error is a 400 with its reason, free`, async () => {
      const { accountId, key } = await gw.account({ creditMicros: 100_000 });
      assert.deepEqual(await gw.call(key, 'POST', '/v1/search', { Type: edition, Query: '   ' }), {
        status: 400,
        body: { error: `upstream refused the request: ${reason}`, type: 'invalid_request_error' },
      });
      assert.equal((await gw.sandboxControl('GET', '/__sandbox/requests')).data.length, 1, 'the upstream was asked');
      assert.equal((await gw.settled(accountId)).balance_micros, 100_000);
      assert.equal((await gw.admin('GET', `/admin/accounts/${accountId}/usage`)).body.data.length, 0);
    });
  }

  test('a failed search is 502 and not charged', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 100_000 });
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'search', status: 500, times: 1 });
    assert.deepEqual(await gw.call(key, 'POST', '/v1/search', { Type: 'web', Query: 'q' }), {
      status: 502,
      body: { error: 'upstream provider error', type: 'server_error' },
    });
    assert.equal((await gw.settled(accountId)).balance_micros, 100_000);
    assert.equal((await gw.admin('GET', `/admin/accounts/${accountId}/usage`)).body.data.length, 0);
  });
});
