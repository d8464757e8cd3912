// The operator's hold on an account's access, through a live gateway: suspending an account (its
// keys refused at once, live and test alike, its console sessions ended), resuming it, and ending
// its console sessions alone.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { cookieOf, send } from '../helpers/console-session.js';
import { ADMIN_TOKEN, eventually, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { runCli } from '../helpers/processes.js';

const SESSION = '/v1/account/session';
const SEARCH = { Type: 'web', Query: 'bridges', Count: 3 };
const SUSPENDED = {
  error: "this API key's account is suspended by the operator; its keys are refused until it is resumed",
  type: 'invalid_request_error',
};

describe('account suspension and console sessions', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway();
  });
  after(() => gw.close());

  const keySession = async (key: string) => cookieOf((await send(gw.url + SESSION, 'POST', {}, { api_key: key })).setCookie);
  const withCookie = (cookie: string, path: string) => send(gw.url + path, 'GET', { cookie });

  test('a suspended account’s keys, live and test, are refused with 403 at once, and work again when resumed', async () => {
    const { accountId, key } = await gw.account();
    const testKey = (await gw.admin('POST', `/admin/accounts/${accountId}/test-keys`, {})).body.key as string;
    // Both keys served from memory before the suspension: it must not wait for the cache.
    assert.equal((await gw.call(key, 'POST', '/v1/search', SEARCH)).status, 200);
    assert.equal((await gw.call(testKey, 'GET', '/v1/account')).status, 200);

    const suspended = await gw.admin('POST', `/admin/accounts/${accountId}/suspend`);
    assert.equal(suspended.status, 200);
    assert.deepEqual({ ...suspended.body, suspended_at: typeof suspended.body.suspended_at }, { id: accountId, suspended_at: 'string', sessions_ended: 0 });
    assert.deepEqual(await gw.call(key, 'POST', '/v1/search', SEARCH), { status: 403, body: SUSPENDED });
    assert.deepEqual(await gw.call(key, 'GET', '/v1/account'), { status: 403, body: SUSPENDED });
    assert.deepEqual(await gw.call(testKey, 'GET', '/v1/account'), { status: 403, body: SUSPENDED });
    assert.equal((await gw.admin('GET', `/admin/accounts/${accountId}`)).body.suspended_at, suspended.body.suspended_at);

    assert.deepEqual((await gw.admin('POST', `/admin/accounts/${accountId}/resume`)).body, { id: accountId, suspended_at: null, sessions_ended: 0 });
    assert.equal((await gw.call(key, 'POST', '/v1/search', SEARCH)).status, 200);
    assert.equal((await gw.call(testKey, 'GET', '/v1/account')).status, 200);
  });

  test('a test key issued while its account is suspended is refused too', async () => {
    const { accountId } = await gw.account();
    await gw.admin('POST', `/admin/accounts/${accountId}/suspend`);
    const testKey = (await gw.admin('POST', `/admin/accounts/${accountId}/test-keys`, {})).body.key as string;
    assert.deepEqual(await gw.call(testKey, 'GET', '/v1/account'), { status: 403, body: SUSPENDED });
  });

  test('suspending an account ends its console sessions, and its keys cannot sign in until it is resumed', async () => {
    const { accountId, key } = await gw.account();
    const cookie = await keySession(key);
    assert.equal((await withCookie(cookie, '/v1/account')).status, 200);
    assert.equal((await gw.admin('POST', `/admin/accounts/${accountId}/suspend`)).body.sessions_ended, 1);
    const refused = await withCookie(cookie, '/v1/account');
    assert.deepEqual([refused.status, refused.body], [401, { error: 'this account is suspended by the operator; ask your operator', type: 'auth_error' }]);
    const signIn = await send(gw.url + SESSION, 'POST', {}, { api_key: key });
    assert.equal(signIn.status, 401);
    assert.match(signIn.body.error, /suspended by the operator/);
    await gw.admin('POST', `/admin/accounts/${accountId}/resume`);
    assert.equal((await withCookie(await keySession(key), '/v1/account')).status, 200);
  });

  test('the operator ends an account’s console sessions; its keys keep working', async () => {
    const { accountId, key } = await gw.account();
    const cookies = [await keySession(key), await keySession(key)];
    const ended = await gw.admin('DELETE', `/admin/accounts/${accountId}/sessions`);
    assert.deepEqual(ended, { status: 200, body: { id: accountId, suspended_at: null, sessions_ended: 2 } });
    for (const cookie of cookies) assert.equal((await withCookie(cookie, '/v1/account')).status, 401);
    assert.equal((await gw.call(key, 'GET', '/v1/account')).status, 200);
  });

  test('the CLI suspends an account, ending its sessions, and resumes it', async () => {
    const { accountId, key } = await gw.account();
    const cookie = await keySession(key);
    const cli = async (command: string) => {
      const printed = await runCli(['accounts', command, accountId], { TOLLROUTE_URL: gw.url, TOLLROUTE_ADMIN_TOKEN: ADMIN_TOKEN });
      assert.equal(printed.code, 0, printed.stderr);
      return JSON.parse(printed.stdout);
    };
    const suspended = await cli('suspend');
    assert.deepEqual([suspended.id, typeof suspended.suspended_at, suspended.sessions_ended], [accountId, 'string', 1]);
    // Through the admin API: the instance that answers stops serving the key at once.
    assert.equal((await gw.call(key, 'GET', '/v1/account')).status, 403);
    assert.equal((await withCookie(cookie, '/v1/account')).status, 401);
    assert.deepEqual(await cli('resume'), { id: accountId, suspended_at: null, sessions_ended: 0 });
    await eventually(async () => (await gw.call(key, 'GET', '/v1/account')).status === 200);
  });

  test('suspending, resuming or signing out an unknown account is a 404, and a test account a 400 naming its live one', async () => {
    for (const [method, path] of [
      ['POST', 'suspend'],
      ['POST', 'resume'],
      ['DELETE', 'sessions'],
    ]) {
      assert.deepEqual(await gw.admin(method!, `/admin/accounts/acct_none/${path}`), {
        status: 404,
        body: { error: 'account acct_none not found', type: 'not_found_error' },
      });
    }
    const { accountId } = await gw.account();
    const twinKey = (await gw.admin('POST', `/admin/accounts/${accountId}/test-keys`, {})).body.key as string;
    const twinId = (await gw.call(twinKey, 'GET', '/v1/account')).body.id as string;
    const refused = await gw.admin('POST', `/admin/accounts/${twinId}/suspend`);
    assert.equal(refused.status, 400);
    assert.match(refused.body.error, new RegExp(`is a test account; act on its live account ${accountId}`));
  });
});
