// Authentication and request validation (spec parts 5 and 7): every refusal in the {error, type} shape.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import { sandboxCatalogue } from '../../src/config/sandbox-catalogue.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

describe('request errors', () => {
  let gw: TestGateway;
  let key: string;
  let accountId: string;
  before(async () => {
    gw = await startTestGateway();
    ({ key, accountId } = await gw.account({ creditMicros: 1_000_000 }));
  });
  after(() => gw.close());

  const post = async (body: string | object, headers: Record<string, string> = { authorization: `Bearer ${key}` }) => {
    const res = await request(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { status: res.statusCode, body: (await res.body.json()) as any };
  };
  const hello = { model: 'sandbox-chat', messages: [{ role: 'user', content: 'hello' }] };

  test('a missing key is 401 invalid or missing API key', async () => {
    assert.deepEqual(await post(hello, {}), { status: 401, body: { error: 'invalid or missing API key', type: 'auth_error' } });
  });

  test('an unknown key is 401', async () => {
    assert.deepEqual(await post(hello, { authorization: 'Bearer tr-not-a-real-key' }), {
      status: 401,
      body: { error: 'invalid or missing API key', type: 'auth_error' },
    });
  });

  test('a key without the tr- prefix is 401', async () => {
    assert.equal((await post(hello, { authorization: `Bearer ${key.slice(3)}` })).status, 401);
  });

  test('the key is also accepted in x-api-key', async () => {
    assert.equal((await post(hello, { 'x-api-key': key })).status, 200);
  });

  test('x-api-key counts even beside an Authorization header that carries no tr- key', async () => {
    assert.equal((await post(hello, { 'x-api-key': key, authorization: 'Bearer sk-something-else' })).status, 200);
  });

  test('an empty model is 400 model field is required', async () => {
    assert.deepEqual(await post({ ...hello, model: '' }), { status: 400, body: { error: 'model field is required', type: 'invalid_request_error' } });
  });

  test('a missing model is 400 model field is required', async () => {
    assert.deepEqual(await post({ messages: hello.messages }), { status: 400, body: { error: 'model field is required', type: 'invalid_request_error' } });
  });

  test('malformed JSON is 400 in the same shape', async () => {
    const { status, body } = await post('{"model": "sandbox-chat",');
    assert.equal(status, 400);
    assert.equal(body.type, 'invalid_request_error');
    assert.match(body.error, /^invalid JSON body/);
  });

  test('a wrong type is 400 naming the field, never coerced', async () => {
    assert.deepEqual(await post({ ...hello, max_tokens: '10' }), {
      status: 400,
      body: { error: 'max_tokens: must be integer or null', type: 'invalid_request_error' },
    });
  });

  test('a nested field at fault is named with its path', async () => {
    assert.deepEqual(await post({ model: 'sandbox-chat', messages: [{ role: 'user' }, { content: 'x' }] }), {
      status: 400,
      body: { error: 'messages[1].role field is required', type: 'invalid_request_error' },
    });
  });

  test('an unknown model is 400 naming it', async () => {
    assert.deepEqual(await post({ ...hello, model: 'nope' }), { status: 400, body: { error: 'unknown model: nope', type: 'invalid_request_error' } });
  });

  test('a model of another type is 400 naming the type the endpoint needs', async () => {
    assert.deepEqual(await post({ ...hello, model: 'sandbox-tts' }), {
      status: 400,
      body: { error: 'model sandbox-tts is not a chat model', type: 'invalid_request_error' },
    });
  });

  test('an unknown route is 404 in the error shape', async () => {
    const res = await request(`${gw.url}/v1/nothing-here`, { headers: { authorization: `Bearer ${key}` } });
    assert.deepEqual(
      { status: res.statusCode, body: await res.body.json() },
      { status: 404, body: { error: 'no route for GET /v1/nothing-here', type: 'not_found_error' } },
    );
  });

  test('refused requests charge nothing', async () => {
    assert.deepEqual(await gw.balance(accountId), {
      ...(await gw.balance(accountId)),
      balance_micros:
        1_000_000 - (await gw.admin('GET', `/admin/accounts/${accountId}/usage`)).body.data.reduce((sum: number, u: any) => sum + u.amount_micros, 0),
      held_micros: 0,
    });
    const usage = (await gw.admin('GET', `/admin/accounts/${accountId}/usage`)).body.data;
    assert.equal(usage.length, 2, 'only the two x-api-key calls were billed');
  });
});

describe('models list', () => {
  let gw: TestGateway;
  let key: string;
  before(async () => {
    gw = await startTestGateway();
    ({ key } = await gw.account());
  });
  after(() => gw.close());

  const list = async (query = '') => {
    const res = await request(`${gw.url}/v1/models${query}`, { headers: { authorization: `Bearer ${key}` } });
    return { status: res.statusCode, body: (await res.body.json()) as any };
  };

  test('lists every configured model in the OpenAI shape with model_type and its pricing', async () => {
    const { body } = await list();
    assert.equal(body.object, 'list');
    assert.deepEqual(
      body.data.find((m: any) => m.id === 'sandbox-video'),
      { id: 'sandbox-video', object: 'model', created: 1767225600, owned_by: 'tollroute', model_type: 'video', pricing: { second: '0.1' } },
    );
    assert.deepEqual(body.data.map((m: any) => m.id).sort(), Object.keys(sandboxCatalogue('http://127.0.0.1:1').models ?? {}).sort());
  });

  test('?type= filters by model_type', async () => {
    const { body } = await list('?type=search');
    assert.deepEqual(
      body.data.map((m: any) => m.id),
      ['vendor-web-search', 'vendor-global-search'],
    );
  });

  test('an unknown ?type= is 400 naming the allowed values', async () => {
    const { status, body } = await list('?type=banana');
    assert.equal(status, 400);
    assert.match(body.error, /^type: must be one of "chat"/);
  });

  test('needs a key', async () => {
    assert.equal((await request(`${gw.url}/v1/models`)).statusCode, 401);
  });

  test("counts against the key's requests per minute", async () => {
    const limited = await gw.account({ rpm: 2 });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await gw.call(limited.key, 'GET', '/v1/models')).status);
    assert.deepEqual(statuses, [200, 200, 429]);
  });
});
