// The admin API's lists behind the console's operator view: accounts (paged, searched), an
// account's keys and sign-in links without their secrets, and the channels with their live state.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { keyFingerprint } from '../../src/routing/routes.js';
import { ADMIN_TOKEN, eventually, startTestGateway, type TestGateway } from '../helpers/gateway.js';

const CHAT = { model: 'sandbox-chat', messages: [{ role: 'user', content: 'a b' }] };

describe('the admin API behind the operator view', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway();
  });
  after(() => gw.close());

  const create = async (name: string) => (await gw.admin('POST', '/admin/accounts', { name, credit_micros: 1_000 })).body as { id: string };

  test('every new list answers 401 without the admin token', async () => {
    const { id } = await create('guarded');
    for (const path of ['/admin/accounts', `/admin/accounts/${id}/keys`, `/admin/accounts/${id}/login-links`, '/admin/channels']) {
      const { status, body } = await gw.call(ADMIN_TOKEN.replace('adm', 'bad'), 'GET', path);
      assert.deepEqual({ path, status, body }, { path, status: 401, body: { error: 'invalid or missing admin token', type: 'auth_error' } });
    }
  });

  test('accounts are listed newest first with their balance, held and overdraft', async () => {
    const { id } = await create('listed newest');
    const { status, body } = await gw.admin('GET', '/admin/accounts?limit=1');
    assert.equal(status, 200);
    // The account as GET /admin/accounts/{id} shows it, less the test balance and suspension that only that view adds.
    const {
      test_balance_micros: _balance,
      test_held_micros: _held,
      suspended_at: _suspended,
      ...account
    } = (await gw.admin('GET', `/admin/accounts/${id}`)).body;
    assert.deepEqual(body.data, [account]);
    assert.deepEqual(Object.keys(body.data[0]).sort(), ['balance_micros', 'created_at', 'held_micros', 'id', 'name', 'overdraft_micros']);
  });

  test('pages of accounts follow one another by cursor without a repeat or a gap', async () => {
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push((await create(`pager-${i}`)).id);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const query: string = `?name=pager-&limit=2${cursor ? `&cursor=${cursor}` : ''}`;
      const { body } = await gw.admin('GET', `/admin/accounts${query}`);
      seen.push(...body.data.map((a: { id: string }) => a.id));
      cursor = body.next_cursor;
    } while (cursor !== null);
    assert.deepEqual(seen, made.reverse());
  });

  test('a name search matches part of a name whatever its case, and % is only a percent sign', async () => {
    const { id } = await create('Acme Rockets 100%');
    await create('Acme Rockets 1000');
    const found = async (name: string) => (await gw.admin('GET', `/admin/accounts?name=${encodeURIComponent(name)}`)).body.data.map((a: any) => a.id);
    assert.deepEqual(await found('rockets 100%'), [id]);
  });

  test('a cursor the API did not give is a 400', async () => {
    const { status, body } = await gw.admin('GET', '/admin/accounts?cursor=bm90LWEtY3Vyc29y');
    assert.equal(status, 400);
    assert.match(body.error, /^cursor: /);
  });

  test('an account’s keys are listed with prefix, name, rpm, limits and times, never a key or its hash', async () => {
    const { id } = await create('keys listed');
    const issued = (await gw.admin('POST', `/admin/accounts/${id}/keys`, { name: 'ci', rpm: 60 })).body;
    await gw.admin('DELETE', `/admin/keys/${issued.id}`);
    const { status, body } = await gw.admin('GET', `/admin/accounts/${id}/keys`);
    assert.equal(status, 200);
    const [key] = body.data;
    assert.deepEqual(Object.keys(key).sort(), [
      'allowed_models',
      'created_at',
      'daily_cap_micros',
      'expires_at',
      'id',
      'last_used_at',
      'monthly_cap_micros',
      'name',
      'prefix',
      'revoked_at',
      'rpm',
      'spend',
    ]);
    assert.deepEqual([key.id, key.prefix, key.name, key.rpm, key.last_used_at], [issued.id, issued.prefix, 'ci', 60, null]);
    assert.match(key.revoked_at, /^\d{4}-/);
    const stored = await gw.gateway.store.db.selectFrom('api_keys').select('key_hash').where('id', '=', issued.id).executeTakeFirstOrThrow();
    const text = JSON.stringify(body);
    assert.ok(!text.includes(issued.key.slice(issued.prefix.length)) && !text.includes(stored.key_hash), 'neither the key nor its hash is answered');
  });

  test('a key’s last use shows once the gateway has written it', async () => {
    const { accountId, key } = await gw.account();
    assert.equal((await gw.call(key, 'POST', '/v1/chat/completions', CHAT)).status, 200);
    await gw.gateway.keyUse.flush();
    const [listed] = (await gw.admin('GET', `/admin/accounts/${accountId}/keys`)).body.data;
    assert.match(listed.last_used_at, /^\d{4}-/);
  });

  test('an account’s sign-in links are listed with their times and state, never a token or its hash', async () => {
    const { id } = await create('links listed');
    const first = (await gw.admin('POST', `/admin/accounts/${id}/login-links`)).body;
    // A later millisecond: links made in the same one are listed in the order of their random ids.
    await new Promise((resolve) => setTimeout(resolve, 2));
    await gw.admin('POST', `/admin/accounts/${id}/login-links`);
    const token = new URL(first.url).hash.slice('#token='.length);
    assert.equal((await gw.call('', 'POST', '/v1/account/session', { login_token: token })).status, 200);

    const { status, body } = await gw.admin('GET', `/admin/accounts/${id}/login-links`);
    assert.equal(status, 200);
    assert.deepEqual(
      body.data.map((link: any) => [link.state, link.used_at === null]),
      [
        ['unused', true],
        ['used', false],
      ],
    );
    assert.equal(body.data[1].expires_at, first.expires_at);
    const hashes = await gw.gateway.store.db.selectFrom('console_login_links').select('token_hash').where('account_id', '=', id).execute();
    const text = JSON.stringify(body);
    assert.ok(!text.includes(token) && hashes.every((h) => !text.includes(h.token_hash)), 'neither the token nor its hash is answered');
  });

  test('the lists of an unknown account are 404', async () => {
    for (const list of ['keys', 'login-links']) assert.equal((await gw.admin('GET', `/admin/accounts/acct_missing/${list}`)).status, 404);
  });

  test('channels are listed with their kind, origin, models, connection limit and health, never an upstream key', async () => {
    const { status, body } = await gw.admin('GET', '/admin/channels');
    assert.equal(status, 200);
    const { requests, error_rate, latency_ms, last_error, keys, opens_until, state, ...openai } = body.data.find((c: any) => c.name === 'sandbox-openai');
    // Other tests here call the channel too: its figures are checked for shape, its state for being well.
    assert.deepEqual(
      { state, opens_until, last_error, requests: typeof requests, error_rate, latency: Object.keys(latency_ms) },
      { state: 'closed', opens_until: null, last_error: null, requests: 'number', error_rate: 0, latency: ['p50', 'p99'] },
    );
    assert.deepEqual(
      keys.map((k: any) => ({ ...k, requests: typeof k.requests })),
      [{ key: keyFingerprint('sk-sandbox'), state: 'closed', requests: 'number', error_rate: 0, rested_until: null }],
    );
    assert.deepEqual(
      { ...openai, connections: { limit: openai.connections.limit } },
      {
        name: 'sandbox-openai',
        kind: 'openai',
        origin: new URL(gw.sandbox.url).origin,
        models: ['sandbox-chat', 'sandbox-embedding', 'sandbox-image', 'sandbox-moderation', 'sandbox-rerank', 'sandbox-transcribe'],
        connections: { limit: 4096 },
        connection_wait_ms: 5_000,
      },
    );
    assert.deepEqual({ limiter: body.rate_limiter, store: body.store }, { limiter: { shared: false, degraded: false }, store: { writable: true } });
    // The sandbox's channels all carry the upstream key sk-sandbox.
    assert.ok(!JSON.stringify(body).includes('sk-sandbox'), JSON.stringify(body));
  });

  test('a channel’s call on the wire shows in its in_flight count while it runs', async () => {
    const { key } = await gw.account();
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'chat', delay_ms: 1_000, times: 1 });
    const call = gw.call(key, 'POST', '/v1/chat/completions', CHAT);
    const inFlight = async () => (await gw.admin('GET', '/admin/channels')).body.data.find((c: any) => c.name === 'sandbox-openai').connections.in_flight;
    assert.equal(await eventually(async () => (await inFlight()) === 1 && 1), 1);
    assert.equal((await call).status, 200);
    assert.equal(await inFlight(), 0);
  });
});
