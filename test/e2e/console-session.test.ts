// Signing in to the account console through a live gateway: one-time links the operator issues
// (admin API and CLI), API keys, the session cookie's properties, sign-out, expiry, the origin
// check on cookie writes, and that a cookie never pays for a metered call.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { cookieOf, send } from '../helpers/console-session.js';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { runCli } from '../helpers/processes.js';

const SESSION = '/v1/account/session';
const CHAT = { model: 'sandbox-chat', messages: [{ role: 'user', content: 'a b' }] };
const unauthorized = (error: string) => ({ status: 401, body: { error, type: 'auth_error' } });
const forbiddenFrom = (error: string) => ({ status: 403, body: { error, type: 'invalid_request_error' } });
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const LINK_USED = 'this sign-in link was already used; ask your operator for a new one';

describe('console sign-in', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway();
  });
  after(async () => {
    await gw.close();
  });

  const signIn = (body: unknown, headers: Record<string, string> = {}) => send(gw.url + SESSION, 'POST', headers, body);
  const withCookie = (cookie: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    send(gw.url + path, method, { cookie, ...headers }, body);
  const tokenOf = (url: string) => new URL(url).hash.replace(/^#token=/, '');
  const newLink = async (accountId: string) => (await gw.admin('POST', `/admin/accounts/${accountId}/login-links`)).body as { url: string; expires_at: string };
  const keySession = async (key: string) => cookieOf((await signIn({ api_key: key })).setCookie);
  const accountView = async (accountId: string) => {
    // The account API's view: the admin view less the secret and the test balance.
    const {
      webhook_secret: _,
      test_balance_micros: _balance,
      test_held_micros: _held,
      suspended_at: _suspended,
      ...shown
    } = (await gw.admin('GET', `/admin/accounts/${accountId}`)).body;
    return shown;
  };

  test('the operator gets a one-time link under the public address, good for 15 minutes', async () => {
    const { accountId } = await gw.account();
    const before = Date.now();
    const created = await gw.admin('POST', `/admin/accounts/${accountId}/login-links`);
    const after = Date.now();
    assert.equal(created.status, 201);
    assert.deepEqual(Object.keys(created.body).sort(), ['expires_at', 'url']);
    assert.match(created.body.url, new RegExp(`^${gw.url}/dashboard/login#token=[A-Za-z0-9_-]{43}$`));
    const expiresAt = Date.parse(created.body.expires_at);
    assert.ok(expiresAt >= before + 15 * 60_000 && expiresAt <= after + 15 * 60_000, created.body.expires_at);
    assert.deepEqual(await gw.admin('POST', '/admin/accounts/acct_none/login-links'), {
      status: 404,
      body: { error: 'account acct_none not found', type: 'not_found_error' },
    });
  });

  test('a link signs in once, and its second use is refused with a message that says so', async () => {
    const { accountId } = await gw.account();
    const token = tokenOf((await newLink(accountId)).url);
    const first = await signIn({ login_token: token });
    assert.equal(first.status, 200);
    assert.deepEqual(first.body, { account: await accountView(accountId), expires_at: first.body.expires_at });
    const { setCookie: _, ...second } = await signIn({ login_token: token });
    assert.deepEqual(second, unauthorized(LINK_USED));
  });

  test('an expired link is refused with a message that says it expired', async () => {
    const { accountId } = await gw.account();
    const token = tokenOf((await newLink(accountId)).url);
    await gw.gateway.store.db
      .updateTable('console_login_links')
      .set({ expires_at: Date.now() - 1 })
      .where('token_hash', '=', sha256(token))
      .execute();
    const { status, body } = await signIn({ login_token: token });
    assert.deepEqual({ status, body }, unauthorized('this sign-in link expired; ask your operator for a new one'));
  });

  test('a token no link was issued with is refused as not valid', async () => {
    const { status, body } = await signIn({ login_token: 'A'.repeat(43) });
    assert.deepEqual({ status, body }, unauthorized('this sign-in link is not valid; ask your operator for a new one'));
  });

  test('an API key signs in, answering the account and when the session ends', async () => {
    const { accountId, key } = await gw.account();
    const before = Date.now();
    const signedIn = await signIn({ api_key: key });
    assert.equal(signedIn.status, 200);
    assert.deepEqual(signedIn.body, { account: await accountView(accountId), expires_at: signedIn.body.expires_at });
    const endsAt = Date.parse(signedIn.body.expires_at);
    assert.ok(endsAt >= before + 12 * 3_600_000 && endsAt <= Date.now() + 12 * 3_600_000, signedIn.body.expires_at);
  });

  test('a wrong key is refused with 401 and a message that says it is not valid', async () => {
    const { key } = await gw.account();
    const { status, body, setCookie } = await signIn({ api_key: `${key.slice(0, -4)}AAAA` });
    assert.deepEqual({ status, body }, unauthorized('this API key is not valid; check that it was copied whole'));
    assert.equal(setCookie, undefined);
  });

  test('a revoked key is refused with 401 and a message that says it was revoked', async () => {
    const { key, keyId } = await gw.account();
    await gw.admin('DELETE', `/admin/keys/${keyId}`);
    const { status, body } = await signIn({ api_key: key });
    assert.deepEqual({ status, body }, unauthorized('this API key was revoked; sign in with another key, or ask your operator for a sign-in link'));
  });

  test('a sign-in with both a token and a key, or neither, is a 400', async () => {
    const { key } = await gw.account();
    const both = await signIn({ api_key: key, login_token: 'x' });
    const neither = await signIn({});
    for (const answer of [both, neither]) {
      assert.deepEqual(
        { status: answer.status, body: answer.body },
        { status: 400, body: { error: 'send either login_token or api_key', type: 'invalid_request_error' } },
      );
    }
  });

  test('the cookie is HttpOnly, SameSite=Strict, for the whole gateway, lives 12 hours, and is not Secure over plain http', async () => {
    const { key } = await gw.account();
    const { setCookie } = await signIn({ api_key: key });
    const [pair, ...attributes] = (setCookie ?? '').split('; ');
    assert.match(pair!, /^tollroute_session=[A-Za-z0-9_-]{43}$/);
    assert.deepEqual(attributes.sort(), ['HttpOnly', 'Max-Age=43200', 'Path=/', 'SameSite=Strict']);
  });

  test('the cookie reads the account and its keys', async () => {
    const { accountId, key, keyId } = await gw.account();
    const cookie = await keySession(key);
    assert.deepEqual(await withCookie(cookie, 'GET', '/v1/account'), {
      status: 200,
      body: { ...(await accountView(accountId)), low_balance_micros: null, balance_low: false },
      setCookie: undefined,
    });
    const keys = await withCookie(cookie, 'GET', '/v1/account/keys');
    assert.equal(keys.status, 200);
    assert.deepEqual(
      keys.body.data.map((k: any) => k.id),
      [keyId],
    );
  });

  test('signing out ends the session on the gateway: the same cookie is refused afterwards', async () => {
    const { key } = await gw.account();
    const cookie = await keySession(key);
    const out = await withCookie(cookie, 'DELETE', SESSION);
    assert.equal(out.status, 204);
    assert.match(out.setCookie ?? '', /^tollroute_session=; Max-Age=0; Path=\/; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; SameSite=Strict$/);
    const { status, body } = await withCookie(cookie, 'GET', '/v1/account');
    assert.deepEqual({ status, body }, unauthorized('this console session was signed out; sign in again'));
  });

  test('an expired session is refused, and the browser told to drop its cookie', async () => {
    const { key } = await gw.account();
    const cookie = await keySession(key);
    await gw.gateway.store.db
      .updateTable('console_sessions')
      .set({ expires_at: Date.now() - 1 })
      .where('id', '=', sha256(cookie.split('=')[1]!))
      .execute();
    const { status, body, setCookie } = await withCookie(cookie, 'GET', '/v1/account');
    assert.deepEqual({ status, body }, unauthorized('this console session expired; sign in again'));
    assert.match(setCookie ?? '', /^tollroute_session=; Max-Age=0;/);
  });

  test('a session signed in with a key ends when the key is revoked', async () => {
    const { key, keyId } = await gw.account();
    const cookie = await keySession(key);
    await gw.admin('DELETE', `/admin/keys/${keyId}`);
    const { status, body } = await withCookie(cookie, 'GET', '/v1/account');
    assert.deepEqual({ status, body }, unauthorized('the API key this console session signed in with was revoked; sign in again'));
  });

  test('a cookie never authenticates chat completions', async () => {
    const { key } = await gw.account();
    const cookie = await keySession(key);
    const { status, body } = await withCookie(cookie, 'POST', '/v1/chat/completions', CHAT);
    assert.deepEqual({ status, body }, unauthorized('invalid or missing API key'));
  });

  test('a POST with the cookie from another site’s Origin is refused with 403', async () => {
    const { key } = await gw.account();
    const cookie = await keySession(key);
    const { status, body } = await withCookie(cookie, 'POST', '/v1/account/keys', { name: 'x' }, { origin: 'https://evil.example' });
    assert.deepEqual(
      { status, body },
      forbiddenFrom(`refused: Origin https://evil.example is not this gateway's (${gw.url}); use the console on this gateway`),
    );
  });

  test('a DELETE with the cookie marked Sec-Fetch-Site: cross-site is refused with 403, and the session lives on', async () => {
    const { key } = await gw.account();
    const cookie = await keySession(key);
    const { status, body } = await withCookie(cookie, 'DELETE', SESSION, undefined, { 'sec-fetch-site': 'cross-site' });
    assert.deepEqual(
      { status, body },
      forbiddenFrom('refused: this request came from another site (Sec-Fetch-Site: cross-site); use the console on this gateway'),
    );
    assert.equal((await withCookie(cookie, 'GET', '/v1/account')).status, 200);
  });

  test('a POST with the cookie from the gateway’s own origin passes', async () => {
    const { key } = await gw.account();
    const cookie = await keySession(key);
    const created = await withCookie(cookie, 'POST', '/v1/account/keys', { name: 'from the console' }, { origin: gw.url, 'sec-fetch-site': 'same-origin' });
    assert.equal(created.status, 201);
    assert.equal(created.body.name, 'from the console');
  });

  test('a sign-in from another site’s page is refused with 403, so no one is signed in to an account not theirs', async () => {
    const { key } = await gw.account();
    const refused = await signIn({ api_key: key }, { origin: 'https://evil.example' });
    assert.deepEqual(
      { status: refused.status, body: refused.body, setCookie: refused.setCookie },
      { ...forbiddenFrom(`refused: Origin https://evil.example is not this gateway's (${gw.url}); use the console on this gateway`), setCookie: undefined },
    );
  });

  test('signing in again from the same browser ends the session it held before', async () => {
    const { key } = await gw.account();
    const first = await keySession(key);
    const second = cookieOf((await signIn({ api_key: key }, { cookie: first })).setCookie);
    assert.equal((await withCookie(first, 'GET', '/v1/account')).status, 401);
    assert.equal((await withCookie(second, 'GET', '/v1/account')).status, 200);
  });

  test('a key call is not subject to the origin check', async () => {
    const { key } = await gw.account();
    const created = await gw.call(key, 'POST', '/v1/account/keys', { name: 'script' }, { origin: 'https://evil.example' });
    assert.equal(created.status, 201);
  });

  test('a session signed in with a key that has an rpm may not create keys; one signed in by link creates them at the default', async () => {
    const { accountId, key } = await gw.account({ rpm: 7 });
    const byKey = await withCookie(await keySession(key), 'POST', '/v1/account/keys', { name: 'k', rpm: null });
    const linked = cookieOf((await signIn({ login_token: tokenOf((await newLink(accountId)).url) })).setCookie);
    const byLink = await withCookie(linked, 'POST', '/v1/account/keys', { name: 'l' });
    assert.deepEqual([byKey.status, byLink.status, byLink.body.rpm], [403, 201, null]);
  });

  test('the link’s token is in no log line, and the store keeps only hashes of it and of the cookie', async () => {
    const { accountId } = await gw.account();
    const token = tokenOf((await newLink(accountId)).url);
    const cookie = cookieOf((await signIn({ login_token: token })).setCookie);
    const secret = cookie.split('=')[1]!;
    await withCookie(cookie, 'GET', '/v1/account');
    assert.ok(!gw.logText().includes(token) && !gw.logText().includes(secret), 'neither secret is logged');
    const db = gw.gateway.store.db;
    const links = await db.selectFrom('console_login_links').selectAll().where('account_id', '=', accountId).execute();
    const sessions = await db.selectFrom('console_sessions').selectAll().where('account_id', '=', accountId).execute();
    assert.deepEqual(
      links.map((row) => row.token_hash),
      [sha256(token)],
    );
    assert.deepEqual(
      sessions.map((row) => [row.id, row.link_id, row.key_id]),
      [[sha256(secret), links[0]!.id, null]],
    );
    const stored = JSON.stringify([links, sessions]);
    assert.ok(!stored.includes(token) && !stored.includes(secret), 'neither secret is stored in clear');
  });

  test('the CLI prints a link that signs in', async () => {
    const { accountId } = await gw.account();
    const printed = await runCli(['accounts', 'login-link', accountId], { TOLLROUTE_URL: gw.url, TOLLROUTE_ADMIN_TOKEN: ADMIN_TOKEN });
    assert.equal(printed.code, 0, printed.stderr);
    const { url, expires_at } = JSON.parse(printed.stdout);
    assert.match(url, new RegExp(`^${gw.url}/dashboard/login#token=[A-Za-z0-9_-]{43}$`));
    assert.match(expires_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const signedIn = await signIn({ login_token: tokenOf(url) });
    assert.equal(signedIn.status, 200);
    assert.equal(signedIn.body.account.id, accountId);
  });
});
