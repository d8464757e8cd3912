// Console sign-in on a gateway whose public address is https (TLS ended by a proxy in front), with
// failed authentications limited to two a minute per address.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { send } from '../helpers/console-session.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const SESSION = '/v1/account/session';

describe('console sign-in behind an https public address, with failed sign-ins limited', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway({ public_url: 'https://console.example.test', limits: { auth_failures_per_minute: 2 } });
  });
  after(async () => {
    await gw.close();
  });

  // The gateway trusts no X-Forwarded-Proto: an https public address is how it knows TLS ends in front.
  test('the cookie is Secure, and sign-in links point at the public address', async () => {
    const { accountId, key } = await gw.account();
    const { setCookie } = await send(gw.url + SESSION, 'POST', {}, { api_key: key });
    assert.deepEqual((setCookie ?? '').split('; ').slice(1).sort(), ['HttpOnly', 'Max-Age=43200', 'Path=/', 'SameSite=Strict', 'Secure']);
    const link = await gw.admin('POST', `/admin/accounts/${accountId}/login-links`);
    assert.match(link.body.url, /^https:\/\/console\.example\.test\/dashboard\/login#token=/);
  });

  test('failed sign-ins from one address are limited like failed keys: 429 past the limit for wrong keys, while a good key signs in', async () => {
    const { key } = await gw.account();
    const wrong = { api_key: `${key.slice(0, -4)}AAAA` };
    assert.equal((await send(gw.url + SESSION, 'POST', {}, wrong)).status, 401);
    assert.equal((await send(gw.url + SESSION, 'POST', {}, wrong)).status, 401);
    const refused = await send(gw.url + SESSION, 'POST', {}, wrong);
    assert.deepEqual(
      { status: refused.status, body: refused.body },
      { status: 429, body: { error: 'too many failed authentications from this address', type: 'rate_limit_error' } },
    );
    assert.equal((await send(gw.url + SESSION, 'POST', {}, { api_key: key })).status, 200);
  });
});
