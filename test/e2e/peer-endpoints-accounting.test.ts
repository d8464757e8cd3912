// The endpoints every peer serves leave the same records as chat: a usage row per call with its
// endpoint, in the account's usage pages and CSV, and in /metrics' request and billed counters.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from '../helpers/gateway.js';

const CALLS = [
  { path: '/v1/embeddings', body: { model: 'sandbox-embedding', input: 'a toll road' }, endpoint: 'embeddings', model: 'sandbox-embedding' },
  { path: '/v1/completions', body: { model: 'sandbox-chat', prompt: 'a toll road', max_tokens: 20 }, endpoint: 'completions', model: 'sandbox-chat' },
  { path: '/v1/moderations', body: { model: 'sandbox-moderation', input: 'a toll road' }, endpoint: 'moderations', model: 'sandbox-moderation' },
  { path: '/v1/rerank', body: { model: 'sandbox-rerank', query: 'toll', documents: ['a toll road', 'a bridge'] }, endpoint: 'rerank', model: 'sandbox-rerank' },
  {
    path: '/v1/images/generations',
    body: { model: 'sandbox-image', prompt: 'a toll gate', response_format: 'b64_json' },
    endpoint: 'images.generations',
    model: 'sandbox-image',
  },
];

describe('accounting of the peer endpoints', () => {
  let gw: TestGateway;
  let key: string;
  before(async () => {
    gw = await startTestGateway();
    ({ key } = await gw.account({ creditMicros: 10_000_000 }));
    for (const call of CALLS) {
      const { status, body } = await gw.call(key, 'POST', call.path, call.body);
      assert.equal(status, 200, `${call.path}: ${JSON.stringify(body)}`);
    }
  });
  after(() => gw.close());

  test('each call is a usage row of the account naming its endpoint and model', async () => {
    const { body } = await gw.call(key, 'GET', '/v1/account/usage?limit=100');
    const rows = body.data as { endpoint: string; model: string }[];
    for (const call of CALLS) {
      assert.ok(
        rows.some((row) => row.endpoint.startsWith(call.endpoint) && row.model === call.model),
        `${call.path}: ${JSON.stringify(rows.map((r) => [r.endpoint, r.model]))}`,
      );
    }
  });

  test('the usage CSV has a line for each call', async () => {
    const res = await request(`${gw.url}/v1/account/usage?format=csv`, { headers: { authorization: `Bearer ${key}` } });
    const csv = await res.body.text();
    for (const call of CALLS)
      assert.ok(
        csv.split('\n').some((line) => line.includes(call.model) && line.includes(call.endpoint)),
        `${call.path} in\n${csv}`,
      );
  });

  test('/metrics counts each route’s requests and the micros billed on each model', async () => {
    const text = await (await request(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).body.text();
    for (const call of CALLS) {
      assert.match(text, new RegExp(`tollroute_http_requests_total\\{[^}]*route="${call.path}"[^}]*status="200"[^}]*\\} 1`), call.path);
    }
    // every priced call billed something (moderation is free: a price of 0 bills nothing)
    for (const model of ['sandbox-embedding', 'sandbox-chat', 'sandbox-rerank', 'sandbox-image']) {
      assert.match(text, new RegExp(`tollroute_billed_micros_total\\{model="${model}"\\} [1-9]`), model);
    }
  });
});
