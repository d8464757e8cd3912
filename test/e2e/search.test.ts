// POST /v1/search end to end: routing by Type or model, bounds, per-call billing.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { request } from 'undici';
import { eventually, startTestGateway, type TestGateway } from '../helpers/gateway.js';

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

  const search = async (key: string, body: unknown) => {
    const res = await request(`${gw.url}/v1/search`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.statusCode, body: (await res.body.json()) as any };
  };
  const settledBalance = (accountId: string) => eventually(async () => {
    const account = await gw.balance(accountId);
    return account.held_micros === 0 && account.balance_micros + 1;
  }).then((b) => b - 1);

  test('Type web routes to vendor-web-search, 10 results by default, one call billed', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 100_000 });
    const { status, body } = await search(key, { Type: 'web', Query: 'toll roads in Europe', SearchType: 'web' });
    assert.equal(status, 200);
    assert.equal(body.Result.WebResults.length, 10);
    assert.equal(body.Result.SearchContext.OriginQuery, 'toll roads in Europe');
    assert.equal(await settledBalance(accountId), 100_000 - 5_000);
    const usage = (await gw.admin('GET', `/admin/accounts/${accountId}/usage`)).body.data[0];
    assert.deepEqual({ model: usage.model, units: usage.units, amount: usage.amount_micros }, { model: 'vendor-web-search', units: { call: 1 }, amount: 5_000 });
  });

  test('Type and model are never sent upstream nor written into the result', async () => {
    const { key } = await gw.account();
    const { body } = await search(key, { Type: 'web', Query: 'bridges', Count: 3 });
    const [sent] = (await gw.sandboxControl('GET', '/__sandbox/requests')).data;
    assert.deepEqual(sent.body, { Query: 'bridges', SearchType: 'web', Count: 3 });
    assert.equal(sent.headers.authorization, 'Bearer sk-sandbox');
    assert.ok(!('Type' in body) && !('model' in body));
    assert.ok(!JSON.stringify(body).includes('"Type"'));
  });

  test('Type global routes to vendor-global-search and its own product', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 100_000 });
    const { status, body } = await search(key, { Type: 'global', Query: 'tolls', Count: 4 });
    assert.equal(status, 200);
    assert.equal(body.Result.Documents.length, 4);
    const [sent] = (await gw.sandboxControl('GET', '/__sandbox/requests')).data;
    assert.equal(sent.path, '/search_api/global_search');
    assert.equal(await settledBalance(accountId), 100_000 - 10_000);
  });

  test('an explicit search model routes too', async () => {
    const { key } = await gw.account();
    const { status, body } = await search(key, { model: 'vendor-web-search', Query: 'q', Count: 50 });
    assert.equal(status, 200);
    assert.equal(body.Result.WebResults.length, 50);
  });

  for (const [name, body, message] of [
    ['Count above 50', { Type: 'web', Query: 'q', Count: 51 }, 'Count: must be <= 50'],
    ['Count below 1', { Type: 'web', Query: 'q', Count: 0 }, 'Count: must be >= 1'],
    ['SearchType image', { Type: 'web', Query: 'q', SearchType: 'image' }, 'SearchType: image search is not supported; use web'],
    ['no Query', { Type: 'web' }, 'Query field is required'],
    ['no Type nor model', { Query: 'q' }, 'Type field is required (web or global), or a search model'],
    ['a model of another type', { model: 'sandbox-chat', Query: 'q' }, 'model sandbox-chat is not a search model'],
  ] as const) {
    test(`${name} is refused with 400 and nothing charged`, async () => {
      const { accountId, key } = await gw.account({ creditMicros: 100_000 });
      assert.deepEqual(await search(key, body), { status: 400, body: { error: message, type: 'invalid_request_error' } });
      assert.equal((await gw.balance(accountId)).balance_micros, 100_000);
    });
  }

  test('a failed search is 502 and not charged', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 100_000 });
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'search', status: 500, times: 1 });
    assert.deepEqual(await search(key, { Type: 'web', Query: 'q' }), { status: 502, body: { error: 'upstream provider error', type: 'server_error' } });
    assert.equal(await settledBalance(accountId), 100_000);
    assert.equal((await gw.admin('GET', `/admin/accounts/${accountId}/usage`)).body.data.length, 0);
  });
});
