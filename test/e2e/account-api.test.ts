// The account API (/v1/account) through a live gateway, with the account holder's own tr- key:
// the account's funds, its keys, tasks, webhook deliveries and secret; another account's ids are
// 404s; bad keys are 401s and bad input a 400 naming the field. Usage and spend: account-usage.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import { verifyWebhook } from '../../src/index.js';
import { insertTask } from '../../src/store/tasks.js';
import { taskRow } from '../helpers/account-rows.js';
import { eventually, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { type Receiver, startReceiver } from '../helpers/receiver.js';

const T0 = Date.UTC(2024, 4, 1, 12);
const CHAT = { model: 'sandbox-chat', messages: [{ role: 'user', content: 'a b' }] };
const CHAT_CHARGE = 3 * 2 + 4 * 8; // 3 input tokens at 2 micros, 4 output tokens at 8
const notFound = (error: string) => ({ status: 404, body: { error, type: 'not_found_error' } });
const badRequest = (error: string) => ({ status: 400, body: { error, type: 'invalid_request_error' } });
// A key issued without limits shows every limit as null, and no spend.
const NO_LIMITS = { allowed_models: null, daily_cap_micros: null, monthly_cap_micros: null, expires_at: null, spend: null };

describe('account API', () => {
  let gw: TestGateway;
  let receiver: Receiver;
  before(async () => {
    gw = await startTestGateway({ webhooks: { retry_delays_ms: [100, 100, 100], timeout_ms: 2_000 } });
    receiver = await startReceiver();
  });
  after(async () => {
    await gw.close();
    await receiver.close();
  });

  const get = (key: string, path: string) => gw.call(key, 'GET', path);
  const imageTask = async (key: string) => {
    const created = await gw.call(key, 'POST', '/v1/images/async', { model: 'sandbox-image', prompt: 'a cat', callback_url: receiver.url });
    assert.equal(created.status, 200);
    return created.body.id as string;
  };
  const deliveriesOf = (key: string, taskId: string, done: (row: any) => boolean) =>
    eventually(async () => {
      const { body } = await get(key, `/v1/account/webhook-deliveries?task_id=${taskId}`);
      return body.data.length === 1 && done(body.data[0]) && body.data[0];
    }, 10_000);

  test('the account shows what a running chat call holds, and the balance less the exact charge once it settles', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    const { created_at } = (await gw.admin('GET', `/admin/accounts/${accountId}`)).body;
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'chat', delay_ms: 500, times: 1 });
    const call = gw.call(key, 'POST', '/v1/chat/completions', CHAT);
    const during = await eventually(async () => {
      const account = (await get(key, '/v1/account')).body;
      return account.held_micros > 0 && account;
    });
    const hold = await gw.gateway.store.db.selectFrom('holds').select('amount_micros').where('account_id', '=', accountId).executeTakeFirstOrThrow();
    const account = { id: accountId, name: 'test', overdraft_micros: 0, created_at, low_balance_micros: null, balance_low: false };
    assert.deepEqual(during, { ...account, balance_micros: 1_000_000 - hold.amount_micros, held_micros: hold.amount_micros });
    assert.equal((await call).status, 200);
    await gw.settled(accountId);
    assert.deepEqual(await get(key, '/v1/account'), { status: 200, body: { ...account, balance_micros: 1_000_000 - CHAT_CHARGE, held_micros: 0 } });
  });

  test('a created key is shown once, works on chat completions at once, and is refused at once when revoked', async () => {
    const { key } = await gw.account({ creditMicros: 1_000_000 });
    const created = await gw.call(key, 'POST', '/v1/account/keys', { name: 'ci' });
    assert.equal(created.status, 201);
    const { key: secret, ...shown } = created.body;
    assert.match(secret, /^tr-[A-Za-z0-9_-]{43}$/);
    assert.deepEqual(shown, {
      id: shown.id,
      prefix: secret.slice(0, 9),
      name: 'ci',
      rpm: null,
      ...NO_LIMITS,
      created_at: shown.created_at,
      last_used_at: null,
      revoked_at: null,
    });
    assert.equal((await gw.call(secret, 'POST', '/v1/chat/completions', CHAT)).status, 200);

    const revoked = await gw.call(key, 'DELETE', `/v1/account/keys/${shown.id}`);
    assert.equal(revoked.status, 200);
    assert.match(revoked.body.revoked_at, /^\d{4}-\d\d-\d\dT/);
    // within the key cache's lifetime: only the revocation's own invalidation refuses it this soon
    assert.deepEqual(await gw.call(secret, 'POST', '/v1/chat/completions', CHAT), {
      status: 401,
      body: { error: 'invalid or missing API key', type: 'auth_error' },
    });
  });

  test('a new key runs at the default requests per minute unless given fewer, never more', async () => {
    const { key } = await gw.account();
    assert.equal((await gw.call(key, 'POST', '/v1/account/keys', { name: 'child' })).body.rpm, null);
    assert.equal((await gw.call(key, 'POST', '/v1/account/keys', { name: 'slow', rpm: 3 })).body.rpm, 3);
    // limits.default_rpm, 600 in the test configuration
    assert.deepEqual(
      await gw.call(key, 'POST', '/v1/account/keys', { name: 'fast', rpm: 601 }),
      badRequest("rpm: at most 600, the gateway's default rate limit"),
    );
  });

  test('the key list shows each key’s prefix and last use, newest first, never the key itself', async () => {
    const { accountId, key, keyId } = await gw.account({ creditMicros: 1_000_000 });
    const before = Date.now();
    await gw.call(key, 'POST', '/v1/chat/completions', CHAT);
    await gw.settled(accountId);
    const idle = (await gw.call(key, 'POST', '/v1/account/keys', { name: 'idle' })).body;
    await gw.gateway.keyUse.flush(); // written every few seconds; now, for the test
    const flushed = Date.now();
    const { body } = await get(key, '/v1/account/keys');
    const lastUsed = Date.parse(body.data[1].last_used_at);
    assert.ok(lastUsed >= before && lastUsed <= flushed, `last used ${body.data[1].last_used_at}`);
    assert.deepEqual(body.data, [
      { id: idle.id, prefix: idle.prefix, name: 'idle', rpm: null, ...NO_LIMITS, created_at: idle.created_at, last_used_at: null, revoked_at: null },
      {
        id: keyId,
        prefix: key.slice(0, 9),
        name: null,
        rpm: null,
        ...NO_LIMITS,
        created_at: body.data[1].created_at,
        last_used_at: body.data[1].last_used_at,
        revoked_at: null,
      },
    ]);
    assert.ok(!JSON.stringify(body).includes(key.slice(9)), 'no part of the key past its prefix is shown');
  });

  test('a key may revoke itself: the answer is given, and its next request is refused', async () => {
    const { key, keyId } = await gw.account();
    assert.equal((await gw.call(key, 'DELETE', `/v1/account/keys/${keyId}`)).status, 200);
    assert.equal((await get(key, '/v1/account')).status, 401);
  });

  test("revoking another account's key is a 404, as for a key that never existed, and leaves it working", async () => {
    const { key } = await gw.account();
    const other = await gw.account();
    assert.deepEqual(await gw.call(key, 'DELETE', `/v1/account/keys/${other.keyId}`), notFound(`key ${other.keyId} not found`));
    assert.deepEqual(await gw.call(key, 'DELETE', '/v1/account/keys/key_none'), notFound('key key_none not found'));
    assert.equal((await get(other.key, '/v1/account')).status, 200);
  });

  test('tasks of every kind are listed newest first in pages, filtered by kind and by status', async () => {
    const { accountId, key } = await gw.account();
    const rows = [
      taskRow(accountId, { id: `vid_${accountId}_1`, createdAt: T0, kind: 'video', status: 'succeeded' }),
      taskRow(accountId, { id: `img_${accountId}_2`, createdAt: T0 + 1, kind: 'image', status: 'failed' }),
      taskRow(accountId, { id: `min_${accountId}_3`, createdAt: T0 + 2, kind: 'minutes', status: 'submitting' }),
      taskRow(accountId, { id: `vid_${accountId}_4`, createdAt: T0 + 3, kind: 'video', status: 'processing' }),
    ];
    for (const row of rows) await insertTask(gw.gateway.store.db, row);
    const [video1, image2, minutes3, video4] = rows.map((row) => row.id);
    const ids = async (query: string) => (await get(key, `/v1/account/tasks?${query}`)).body.data.map((task: any) => task.id);

    const first = (await get(key, '/v1/account/tasks?limit=3')).body;
    const second = (await get(key, `/v1/account/tasks?limit=3&cursor=${first.next_cursor}`)).body;
    assert.deepEqual([first.data.map((t: any) => t.id), second.data.map((t: any) => t.id), second.next_cursor], [[video4, minutes3, image2], [video1], null]);
    assert.deepEqual(await ids('kind=video'), [video4, video1]);
    assert.deepEqual(await ids('status=queued'), [minutes3], 'a task still being submitted is queued');
    assert.deepEqual(first.data[2], {
      id: image2,
      kind: 'image',
      model: 'sandbox-image',
      status: 'failed',
      upstream_id: `up_${image2}`,
      request_id: `req_${image2}`,
      error: { code: 'upstream_failed', message: 'no' },
      created_at: new Date(T0 + 1).toISOString(),
      updated_at: new Date(T0 + 1).toISOString(),
      finished_at: new Date(T0 + 1).toISOString(),
      livemode: true,
    });
  });

  test('a delivered callback is listed with one attempt, its status code and its times', async () => {
    const { key } = await gw.account();
    const taskId = await imageTask(key);
    const delivery = await deliveriesOf(key, taskId, (row) => row.state === 'delivered');
    assert.deepEqual(delivery, {
      id: delivery.id,
      task_id: taskId,
      event_id: delivery.event_id,
      url: receiver.url,
      state: 'delivered',
      attempts: 1,
      last_status: 200,
      last_error: null,
      created_at: delivery.created_at,
      next_attempt_at: null,
      delivered_at: delivery.delivered_at,
    });
    assert.ok(delivery.delivered_at >= delivery.created_at);
  });

  test('a callback refused on every attempt is listed as dropped after four attempts with the last status', async () => {
    const { key } = await gw.account();
    receiver.answers.push(500, 502, 503, 504);
    const taskId = await imageTask(key);
    const delivery = await deliveriesOf(key, taskId, (row) => row.state === 'dropped');
    assert.deepEqual([delivery.attempts, delivery.last_status, delivery.delivered_at, delivery.next_attempt_at], [4, 504, null, null]);
  });

  test("asking for another account's task deliveries is a 404, as for a task that never existed", async () => {
    const { key } = await gw.account();
    const other = await gw.account();
    const taskId = await imageTask(other.key);
    assert.deepEqual(await get(key, `/v1/account/webhook-deliveries?task_id=${taskId}`), notFound(`task ${taskId} not found`));
    assert.deepEqual(await get(key, '/v1/account/webhook-deliveries?task_id=img_none'), notFound('task img_none not found'));
  });

  test('the webhook secret is shown and rotated; callbacks after the rotation verify with the new secret only', async () => {
    const { accountId, key } = await gw.account();
    const old = await get(key, '/v1/account/webhook-secret');
    assert.deepEqual(old, { status: 200, body: { secret: (await gw.admin('GET', `/admin/accounts/${accountId}/webhook-secret`)).body.secret } });
    const rotated = (await gw.call(key, 'POST', '/v1/account/webhook-secret')).body.secret;
    assert.match(rotated, /^whsec_[A-Za-z0-9_-]{43}$/);
    assert.deepEqual((await get(key, '/v1/account/webhook-secret')).body, { secret: rotated });

    const taskId = await imageTask(key);
    const delivery = await eventually(() => receiver.deliveries.find((d) => d.payload.task_id === taskId));
    assert.deepEqual(
      [verifyWebhook(rotated, delivery.headers, delivery.rawBody), verifyWebhook(old.body.secret, delivery.headers, delivery.rawBody)],
      [true, false],
    );
    assert.ok(!gw.logText().includes(rotated) && !gw.logText().includes(old.body.secret), 'no secret is logged');
  });

  test('a missing, unknown or revoked key is a 401', async () => {
    const unauthorized = { status: 401, body: { error: 'invalid or missing API key', type: 'auth_error' } };
    const res = await request(`${gw.url}/v1/account`);
    assert.deepEqual({ status: res.statusCode, body: await res.body.json() }, unauthorized);
    assert.deepEqual(await get('tr-not-a-key', '/v1/account/usage'), unauthorized);
    const { accountId, key } = await gw.account();
    const issued = (await gw.admin('POST', `/admin/accounts/${accountId}/keys`, {})).body;
    await gw.admin('DELETE', `/admin/keys/${issued.id}`);
    assert.deepEqual(await get(issued.key, '/v1/account/keys'), unauthorized);
    assert.equal((await get(key, '/v1/account/keys')).status, 200);
  });

  test('account reads count against the key’s requests per minute: past it, a 429 with Retry-After', async () => {
    const { key } = await gw.account({ rpm: 2 });
    const statuses = [];
    for (const path of ['/v1/account', '/v1/account/usage', '/v1/account/keys']) statuses.push((await get(key, path)).status);
    assert.deepEqual(statuses, [200, 200, 429]);
    const res = await request(`${gw.url}/v1/account/spend`, { headers: { authorization: `Bearer ${key}` } });
    assert.deepEqual(
      { status: res.statusCode, retryAfter: res.headers['retry-after'], body: await res.body.json() },
      { status: 429, retryAfter: '30', body: { error: 'rate limit exceeded', type: 'rate_limit_error' } },
    );
  });

  const badInputs: [string, string, string][] = [
    ['a from that is not a date-time', '/v1/account/usage?from=yesterday', 'from: must match format "date-time"'],
    ['a to without its time zone', '/v1/account/spend?to=2024-05-01T00:00:00', 'to: must match format "date-time"'],
    ['a limit of 0', '/v1/account/usage?limit=0', 'limit: must be an integer from 1 to 500'],
    ['a limit over 500', '/v1/account/tasks?limit=501', 'limit: must be an integer from 1 to 500'],
    [
      'a cursor this API never gave',
      '/v1/account/webhook-deliveries?cursor=bm90LWEtY3Vyc29y',
      'cursor: not a cursor this API returned; pass next_cursor back as it came',
    ],
    [
      'a cursor of characters no cursor has',
      '/v1/account/usage?cursor=not*a*cursor',
      'cursor: not a cursor this API returned; pass next_cursor back as it came',
    ],
    ['a misspelt filter', '/v1/account/usage?modle=sandbox-chat', 'modle: unknown field'],
    ['an unknown group_by', '/v1/account/spend?group_by=week', 'group_by: must be one of "day", "model"'],
  ];
  for (const [what, path, error] of badInputs) {
    test(`${what} is a 400 naming the field`, async () => {
      const { key } = await gw.account();
      assert.deepEqual(await get(key, path), badRequest(error));
    });
  }
});
