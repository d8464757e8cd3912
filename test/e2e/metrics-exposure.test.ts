// /metrics is the operator's: it answers only with the admin token or the metrics token, unless the
// operator made it public; it can also move to a port of its own.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { request } from 'undici';
import { ADMIN_TOKEN, startTestGateway } from '../helpers/gateway.js';
import { freePort } from '../helpers/processes.js';

const TOKEN = 'metrics-token-0123456789';
const REFUSED = {
  status: 401,
  body: { error: 'invalid or missing token: /metrics needs the admin token or metrics.token (or metrics.public: true)', type: 'auth_error' },
};
const scrape = async (url: string, token?: string) => {
  const res = await request(url, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  const text = await res.body.text();
  return { status: res.statusCode, text };
};

test('by default, /metrics answers 401 without a token and the metrics with the admin token', async () => {
  const gw = await startTestGateway();
  try {
    const without = await scrape(`${gw.url}/metrics`);
    assert.deepEqual({ status: without.status, body: JSON.parse(without.text) }, REFUSED);
    assert.equal((await scrape(`${gw.url}/metrics`, 'tr-not-the-admin-token-0123')).status, 401);
    const admin = await scrape(`${gw.url}/metrics`, ADMIN_TOKEN);
    assert.equal(admin.status, 200);
    assert.match(admin.text, /tollroute_http_requests_total/);
  } finally {
    await gw.close();
  }
});

test('with a metrics token, /metrics answers 401 without it and the metrics with it or the admin token', async () => {
  const gw = await startTestGateway({ metrics: { token: TOKEN } });
  try {
    const without = await scrape(`${gw.url}/metrics`);
    assert.deepEqual({ status: without.status, body: JSON.parse(without.text) }, REFUSED);
    assert.equal((await scrape(`${gw.url}/metrics`, 'metrics-token-0123456780')).status, 401);
    const right = await scrape(`${gw.url}/metrics`, TOKEN);
    assert.equal(right.status, 200);
    assert.match(right.text, /tollroute_http_requests_total/);
    assert.equal((await scrape(`${gw.url}/metrics`, ADMIN_TOKEN)).status, 200);
  } finally {
    await gw.close();
  }
});

test('metrics made public answer without a token', async () => {
  const gw = await startTestGateway({ metrics: { public: true } });
  try {
    const open = await scrape(`${gw.url}/metrics`);
    assert.equal(open.status, 200);
    assert.match(open.text, /tollroute_store_writable 1/);
  } finally {
    await gw.close();
  }
});

test('with a metrics port, /metrics is served there, behind the same tokens, and not on the gateway’s port', async () => {
  const port = await freePort();
  const gw = await startTestGateway({ metrics: { port, token: TOKEN } });
  try {
    assert.equal((await scrape(`${gw.url}/metrics`, TOKEN)).status, 404);
    const refused = await scrape(`http://127.0.0.1:${port}/metrics`);
    assert.deepEqual({ status: refused.status, body: JSON.parse(refused.text) }, REFUSED);
    const own = await scrape(`http://127.0.0.1:${port}/metrics`, TOKEN);
    assert.equal(own.status, 200);
    assert.match(own.text, /tollroute_store_writable 1/);
    assert.equal((await scrape(`http://127.0.0.1:${port}/metrics`, ADMIN_TOKEN)).status, 200);
  } finally {
    await gw.close();
  }
});
