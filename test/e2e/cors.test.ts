// CORS for browser applications: off by default; with allowed origins, preflights on /v1/… are
// answered with the headers the official SDKs send, and answers (streams too) expose what they read.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import { buildConfig } from '../../src/config/load.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const APP = 'https://app.example.com';
const SDK_HEADERS = 'authorization, content-type, x-stainless-os, x-stainless-lang, x-stainless-retry-count, idempotency-key, x-request-id';
const EXPOSED = 'retry-after, x-request-id, x-client-request-id, server-timing, idempotent-replayed, x-tollroute-max-tokens-lowered';

const preflight = (url: string, origin: string, requestHeaders = SDK_HEADERS) =>
  request(`${url}/v1/chat/completions`, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': requestHeaders },
  });
const corsHeaders = (headers: Record<string, unknown>) => Object.fromEntries(Object.entries(headers).filter(([name]) => name.startsWith('access-control-')));

describe('with allowed origins', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway({ cors: { origins: [APP] } });
  });
  after(() => gw.close());

  test('a preflight from an allowed origin is answered 204 with the SDKs’ headers allowed', async () => {
    const res = await preflight(gw.url, APP);
    await res.body.dump();
    assert.equal(res.statusCode, 204);
    assert.deepEqual(corsHeaders(res.headers), {
      'access-control-allow-origin': APP,
      'access-control-allow-methods': 'GET, POST, DELETE',
      'access-control-allow-headers': SDK_HEADERS,
      'access-control-max-age': '600',
    });
    assert.equal(res.headers.vary, 'Origin');
  });

  test('a preflight for the messages SDK allows its version, key and browser headers, and nothing else asked', async () => {
    const res = await preflight(gw.url, APP, 'x-api-key, anthropic-version, anthropic-dangerous-direct-browser-access, content-type, x-secret-thing');
    await res.body.dump();
    assert.equal(res.headers['access-control-allow-headers'], 'x-api-key, anthropic-version, anthropic-dangerous-direct-browser-access, content-type');
  });

  test('a call from an allowed origin can read its answer and the headers the SDKs read, streamed or not', async () => {
    const { key } = await gw.account();
    for (const stream of [false, true]) {
      const res = await request(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { origin: APP, authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'sandbox-chat', stream, messages: [{ role: 'user', content: 'hi' }] }),
      });
      await res.body.dump();
      assert.deepEqual(
        { status: res.statusCode, cors: corsHeaders(res.headers) },
        { status: 200, cors: { 'access-control-allow-origin': APP, 'access-control-expose-headers': EXPOSED } },
        `stream: ${stream}`,
      );
    }
  });

  test('another origin gets no CORS headers, on a preflight or a call', async () => {
    const { key } = await gw.account();
    const refused = await preflight(gw.url, 'https://evil.example.com');
    await refused.body.dump();
    const call = await request(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { origin: 'https://evil.example.com', authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sandbox-chat', messages: [{ role: 'user', content: 'hi' }] }),
    });
    await call.body.dump();
    assert.deepEqual(
      { preflight: refused.statusCode, preflightHeaders: corsHeaders(refused.headers), call: call.statusCode, callHeaders: corsHeaders(call.headers) },
      { preflight: 404, preflightHeaders: {}, call: 200, callHeaders: {} },
    );
  });
});

test('CORS is off by default: a preflight gets no CORS headers', async () => {
  const gw = await startTestGateway();
  try {
    const res = await preflight(gw.url, APP);
    await res.body.dump();
    assert.deepEqual({ status: res.statusCode, headers: corsHeaders(res.headers) }, { status: 404, headers: {} });
  } finally {
    await gw.close();
  }
});

test('an origin with a path is refused at start, naming the field', () => {
  assert.throws(() => buildConfig({ cors: { origins: ['https://app.example.com/page'] } }), /cors\.origins\.0/);
});
