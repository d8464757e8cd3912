// /metrics can be kept from callers: behind a bearer token, or on a port of its own.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { request } from 'undici';
import { startTestGateway } from '../helpers/gateway.js';
import { freePort } from '../helpers/processes.js';

const TOKEN = 'metrics-token-0123456789';

test('with a metrics token, /metrics answers 401 without it and the metrics with it', async () => {
  const gw = await startTestGateway({ metrics: { token: TOKEN } });
  try {
    const without = await request(`${gw.url}/metrics`);
    assert.deepEqual(
      { status: without.statusCode, body: await without.body.json() },
      { status: 401, body: { error: 'invalid or missing metrics token', type: 'auth_error' } },
    );
    const wrong = await request(`${gw.url}/metrics`, { headers: { authorization: 'Bearer metrics-token-0123456780' } });
    await wrong.body.dump();
    assert.equal(wrong.statusCode, 401);
    const right = await request(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(right.statusCode, 200);
    assert.match(await right.body.text(), /tollroute_http_requests_total/);
  } finally {
    await gw.close();
  }
});

test('with a metrics port, /metrics is served there and not on the gateway’s port', async () => {
  const port = await freePort();
  const gw = await startTestGateway({ metrics: { port, token: TOKEN } });
  try {
    const onGateway = await request(`${gw.url}/metrics`);
    await onGateway.body.dump();
    assert.equal(onGateway.statusCode, 404);
    const refused = await request(`http://127.0.0.1:${port}/metrics`);
    await refused.body.dump();
    assert.equal(refused.statusCode, 401);
    const own = await request(`http://127.0.0.1:${port}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(own.statusCode, 200);
    assert.match(await own.body.text(), /tollroute_store_writable 1/);
  } finally {
    await gw.close();
  }
});
