// The admin API of DESIGN section 8: accounts, credits, keys, ledger, usage, webhook secret.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

describe('admin API', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway();
  });
  after(() => gw.close());

  test('needs the admin token', async () => {
    const res = await request(`${gw.url}/admin/accounts`, {
      method: 'POST',
      headers: { authorization: 'Bearer tr-wrong', 'content-type': 'application/json' },
      body: '{"name":"x"}',
    });
    assert.deepEqual(
      { status: res.statusCode, body: await res.body.json() },
      { status: 401, body: { error: 'invalid or missing admin token', type: 'auth_error' } },
    );
  });

  test('an account is created with its opening credit and read back', async () => {
    const created = await gw.admin('POST', '/admin/accounts', { name: 'acme', credit_micros: 2_500_000 });
    assert.equal(created.status, 201);
    assert.deepEqual(Object.keys(created.body).sort(), ['balance_micros', 'created_at', 'held_micros', 'id', 'name', 'overdraft_micros']);
    // GET adds the test balance beside the live one (docs/api.md "Test mode"), none until it is first
    // used, and whether the operator suspended the account.
    assert.deepEqual((await gw.admin('GET', `/admin/accounts/${created.body.id}`)).body, {
      ...created.body,
      test_balance_micros: 0,
      test_held_micros: 0,
      suspended_at: null,
    });
    assert.equal(created.body.balance_micros, 2_500_000);
  });

  test('a credit adds to the balance and writes a ledger row, newest first', async () => {
    const { body: account } = await gw.admin('POST', '/admin/accounts', { name: 'credits' });
    const credited = await gw.admin('POST', `/admin/accounts/${account.id}/credit`, { amount_micros: 700, note: 'trial' });
    assert.equal(credited.body.balance_micros, 700);
    await gw.admin('POST', `/admin/accounts/${account.id}/credit`, { amount_micros: 300 });
    const ledger = (await gw.admin('GET', `/admin/accounts/${account.id}/ledger`)).body.data;
    assert.deepEqual(
      ledger.map((r: any) => [r.kind, r.amount_micros, r.note]),
      [
        ['credit', 300, null],
        ['credit', 700, 'trial'],
      ],
    );
  });

  test('a credit that is not a whole number of micros is refused naming the field', async () => {
    const { body: account } = await gw.admin('POST', '/admin/accounts', { name: 'floats' });
    const res = await gw.admin('POST', `/admin/accounts/${account.id}/credit`, { amount_micros: 1.5 });
    assert.deepEqual(res, { status: 400, body: { error: 'amount_micros: must be integer', type: 'invalid_request_error' } });
  });

  test('an unknown account is 404', async () => {
    assert.deepEqual(await gw.admin('GET', '/admin/accounts/acct_missing'), {
      status: 404,
      body: { error: 'account acct_missing not found', type: 'not_found_error' },
    });
  });

  test('a key is shown once and only its prefix is kept', async () => {
    const { body: account } = await gw.admin('POST', '/admin/accounts', { name: 'keys' });
    const { status, body } = await gw.admin('POST', `/admin/accounts/${account.id}/keys`, { name: 'ci', rpm: 60 });
    assert.equal(status, 201);
    assert.match(body.key, /^tr-[A-Za-z0-9_-]{43}$/);
    assert.ok(body.key.startsWith(body.prefix) && body.prefix.length < 12);
    const stored = await gw.gateway.store.db.selectFrom('api_keys').selectAll().where('id', '=', body.id).executeTakeFirstOrThrow();
    assert.ok(!JSON.stringify(stored).includes(body.key.slice(body.prefix.length)), 'the secret part is not stored');
  });

  test('usage lists settled calls with units and amounts', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    const res = await request(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-request-id': 'usage-check' },
      body: JSON.stringify({ model: 'sandbox-chat', messages: [{ role: 'user', content: 'a b' }] }),
    });
    await res.body.dump();
    const [record] = (await gw.admin('GET', `/admin/accounts/${accountId}/usage`)).body.data;
    assert.deepEqual(
      {
        model: record.model,
        endpoint: record.endpoint,
        units: record.units,
        amount: record.amount_micros,
        requestId: record.request_id,
        client: record.client_request_id,
      },
      {
        model: 'sandbox-chat',
        endpoint: 'chat.completions',
        units: { input_token: 3, output_token: 4 },
        amount: 3 * 2 + 4 * 8,
        requestId: res.headers['x-request-id'],
        client: 'usage-check',
      },
    );
    const ledger = (await gw.admin('GET', `/admin/accounts/${accountId}/ledger`)).body.data;
    assert.ok(
      ledger.filter((row: any) => row.hold_id).every((row: any) => row.request_id === res.headers['x-request-id']),
      'the ledger carries the gateway’s own id, never the caller’s',
    );
  });

  test('?limit= pages the ledger, and a limit that is not 1 to 1000 is 400', async () => {
    const { body: account } = await gw.admin('POST', '/admin/accounts', { name: 'paging' });
    for (const amount of [1, 2, 3]) await gw.admin('POST', `/admin/accounts/${account.id}/credit`, { amount_micros: amount });
    assert.deepEqual(
      (await gw.admin('GET', `/admin/accounts/${account.id}/ledger?limit=2`)).body.data.map((r: any) => r.amount_micros),
      [3, 2],
    );
    const outOfBounds = { status: 400, body: { error: 'limit: must be an integer from 1 to 1000', type: 'invalid_request_error' } };
    for (const limit of ['1001', 'abc']) {
      const { status, body } = await gw.admin('GET', `/admin/accounts/${account.id}/ledger?limit=${limit}`);
      assert.deepEqual({ status, body }, outOfBounds, `limit=${limit}`);
    }
  });

  test('the webhook secret is readable and rotates', async () => {
    const { body: account } = await gw.admin('POST', '/admin/accounts', { name: 'hooks' });
    const first = (await gw.admin('GET', `/admin/accounts/${account.id}/webhook-secret`)).body.secret;
    assert.match(first, /^whsec_/);
    const rotated = (await gw.admin('POST', `/admin/accounts/${account.id}/webhook-secret`)).body.secret;
    assert.match(rotated, /^whsec_/);
    assert.notEqual(rotated, first);
    assert.equal((await gw.admin('GET', `/admin/accounts/${account.id}/webhook-secret`)).body.secret, rotated);
  });
});
