// Bodies that are not what a route reads: the wrong content type, an empty body, nesting past the
// limit, prototype pollution, a multipart body without its boundary. Each a 400 in the error shape,
// never a 415 or a 500, and nothing charged.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import { jsonDepth, MAX_JSON_DEPTH, mayNestDeeperThan, parseJsonBody } from '../../src/http/json-body.js';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from '../helpers/gateway.js';

describe('request bodies', () => {
  let gw: TestGateway;
  let key: string;
  let accountId: string;
  before(async () => {
    gw = await startTestGateway();
    ({ key, accountId } = await gw.account({ creditMicros: 1_000_000 }));
  });
  after(() => gw.close());

  const send = async (path: string, body: string, headers: Record<string, string>, method = 'POST') => {
    const res = await request(`${gw.url}${path}`, { method: method as 'POST', headers: { authorization: `Bearer ${key}`, ...headers }, body });
    const text = await res.body.text();
    return { status: res.statusCode, body: text ? JSON.parse(text) : undefined };
  };
  const hello = '{"model":"sandbox-chat","messages":[{"role":"user","content":"x"}]}';

  test('a form-encoded body (what curl -d sends) is a 400 naming the content type to send', async () => {
    assert.deepEqual(await send('/v1/chat/completions', 'a=1', { 'content-type': 'application/x-www-form-urlencoded' }), {
      status: 400,
      body: { error: 'Content-Type: send application/json (or multipart/form-data where a file is uploaded)', type: 'invalid_request_error' },
    });
  });

  test('JSON nested deeper than the limit is a 400, not a stack overflow', async () => {
    const deep = `{"model":"sandbox-chat","messages":[{"role":"user","content":${'['.repeat(10_000)}${']'.repeat(10_000)}}]}`;
    assert.deepEqual(await send('/v1/chat/completions', deep, { 'content-type': 'application/json' }), {
      status: 400,
      body: { error: `invalid JSON body: nested deeper than ${MAX_JSON_DEPTH} levels`, type: 'invalid_request_error' },
    });
    assert.equal((await send('/v1/chat/completions', hello, { 'content-type': 'application/json' })).status, 200, 'still serving');
  });

  test('a __proto__ key is refused', async () => {
    const polluted = '{"model":"sandbox-chat","messages":[{"role":"user","content":"x"}],"__proto__":{"admin":true}}';
    const res = await send('/v1/chat/completions', polluted, { 'content-type': 'application/json' });
    assert.equal(res.status, 400);
    assert.match(res.body.error, /^invalid JSON body: /);
  });

  test('a multipart body without a boundary is a 400 that says so', async () => {
    assert.deepEqual(await send('/v1/audio/translations', 'xx', { 'content-type': 'multipart/form-data' }), {
      status: 400,
      body: { error: 'Content-Type: multipart/form-data needs a boundary parameter (multipart/form-data; boundary=…)', type: 'invalid_request_error' },
    });
  });

  test('an empty JSON body is accepted where a route needs none, and named where one is required', async () => {
    const { body: created } = await gw.admin('POST', `/admin/accounts/${accountId}/keys`, {});
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
    const revoke = await request(`${gw.url}/admin/keys/${created.id}`, { method: 'DELETE', headers: admin });
    assert.equal(revoke.statusCode, 200, await revoke.body.text());
    const rotate = await request(`${gw.url}/admin/accounts/${accountId}/webhook-secret`, { method: 'POST', headers: admin });
    assert.equal(rotate.statusCode, 200, await rotate.body.text());
    assert.deepEqual(await send('/v1/chat/completions', '', { 'content-type': 'application/json' }), {
      status: 400,
      body: { error: 'body: must be object', type: 'invalid_request_error' },
    });
  });

  test('nothing was charged for any refused body', async () => {
    const ledger = (await gw.admin('GET', `/admin/accounts/${accountId}/ledger`)).body.data;
    assert.deepEqual(
      ledger.map((row: any) => row.kind),
      ['settle', 'hold', 'credit'],
      'only the one good call held and settled',
    );
  });
});

test('the nesting depth of JSON text is counted without parsing it, strings skipped', () => {
  assert.equal(jsonDepth('{"a":[1,{"b":"[[[{{{"}]}'), 3);
  assert.equal(jsonDepth('"\\\\"'), 0);
  assert.equal(jsonDepth('[[["\\"]"]]]'), 3);
});

test('text with no more openers than the limit is never walked, and the count includes those inside strings', () => {
  assert.equal(mayNestDeeperThan('{"a":[1,{"b":2}]}', 3), false);
  assert.equal(mayNestDeeperThan('{"a":[1,{"b":2}]}', 2), true);
  assert.equal(mayNestDeeperThan('{"a":"[[[["}', 4), true, 'a bound, strings counted');
  assert.equal(mayNestDeeperThan('{"a":"[[[["}', 5), false);
});

test('text deep enough is refused and text with many brackets inside strings but shallow is parsed', () => {
  const deep = `${'['.repeat(MAX_JSON_DEPTH + 1)}${']'.repeat(MAX_JSON_DEPTH + 1)}`;
  assert.throws(() => parseJsonBody(deep), /nested deeper than 64 levels/);
  const shallow = JSON.stringify({ text: '['.repeat(500), list: [[1]] });
  assert.deepEqual(parseJsonBody(shallow), { text: '['.repeat(500), list: [[1]] });
  const exactlyAtLimit = `${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}`;
  assert.ok(Array.isArray(parseJsonBody(exactlyAtLimit)));
});

describe('fields of several forms', () => {
  let gw: TestGateway;
  let key: string;
  before(async () => {
    gw = await startTestGateway();
    ({ key } = await gw.account({ creditMicros: 1_000_000 }));
  });
  after(() => gw.close());

  const post = async (path: string, body: object, headers: Record<string, string> = {}) => {
    const res = await request(`${gw.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    return { status: res.statusCode, body: await res.body.json() };
  };
  const messages = { 'anthropic-version': '2023-06-01' };

  test('a value of neither form names both forms', async () => {
    assert.deepEqual(await post('/v1/responses', { model: 'sandbox-chat', input: 5 }), {
      status: 400,
      body: { error: 'input: must be string or array', type: 'invalid_request_error' },
    });
    assert.deepEqual(await post('/v1/messages', { model: 'sandbox-chat', max_tokens: 5, system: 5, messages: [{ role: 'user', content: 'x' }] }, messages), {
      status: 400,
      body: { error: 'system: must be string or array', type: 'invalid_request_error' },
    });
  });

  test('a value of the right outline that fails inside names what failed inside', async () => {
    assert.deepEqual(await post('/v1/messages', { model: 'sandbox-chat', max_tokens: 5, messages: [{ role: 'user', content: [5] }] }, messages), {
      status: 400,
      body: { error: 'messages[0].content[0]: must be object', type: 'invalid_request_error' },
    });
  });
});
