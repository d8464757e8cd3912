// A model served by several channels, each its own sandbox: every cause that moves a call to the
// next channel or key, the refusals that never do, nothing retried after the first byte, tasks
// that stay with the channel that took them, and one hold billed once whichever channel served.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { request } from 'undici';
import { sandboxCatalogue } from '../../src/config/sandbox-catalogue.js';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.js';
import { listLedger } from '../../src/store/ledger-rows.js';
import { listUsage } from '../../src/store/usage.js';
import { eventually, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { freePort } from '../helpers/processes.js';

const CHAT = { model: 'routed-chat', messages: [{ role: 'user', content: 'a b' }] };
const CHAT_CHARGE = 3 * 2 + 4 * 8; // the sandbox's answer to "a b" at the catalogue's chat price
const KEYS = { a1: 'sk-a-first', a2: 'sk-a-second', b: 'sk-b-only' };

describe('failover over several channels', () => {
  let gw: TestGateway;
  let b: Sandbox;
  let deadPort: number;
  before(async () => {
    b = await startSandbox({ port: 0, taskMs: 100 });
    deadPort = await freePort(); // nothing listens here: connection refused
    gw = await startTestGateway((aUrl) => {
      const catalogue = sandboxCatalogue(aUrl) as { channels: Record<string, object>; models: Record<string, any> };
      const openai = (base: string, keys: string[]) => ({ kind: 'openai' as const, base_url: base, api_keys: keys, timeouts: { headers_ms: 400 } });
      return {
        // Health's memory kept to a millisecond, so each test starts with every channel and key in
        // traffic (channel-health.test.ts tests the breaker itself).
        routing: { cooldown_ms: 1, max_cooldown_ms: 1, rate_limit_rest_ms: 1, failures_to_open: 1_000, seed: 20261122 },
        channels: {
          ...catalogue.channels,
          a: openai(aUrl, [KEYS.a1, KEYS.a2]),
          b: openai(b.url, [KEYS.b]),
          dead: openai(`http://127.0.0.1:${deadPort}`, ['sk-dead']),
          'ark-a': { kind: 'ark' as const, base_url: aUrl, api_key: 'sk-ark-a' },
          'ark-b': { kind: 'ark' as const, base_url: b.url, api_key: 'sk-ark-b' },
        },
        models: {
          ...catalogue.models,
          'routed-chat': { ...catalogue.models['sandbox-chat'], channel: undefined, channels: [{ channel: 'a' }, { channel: 'b', priority: 1 }] },
          'dead-first': {
            ...catalogue.models['sandbox-chat'],
            channel: undefined,
            channels: [
              { channel: 'dead', upstream_model: 'sandbox-chat' },
              { channel: 'b', upstream_model: 'sandbox-chat', priority: 1 },
            ],
          },
          'weighted-chat': {
            ...catalogue.models['sandbox-chat'],
            channel: undefined,
            channels: [
              { channel: 'a', upstream_model: 'sandbox-chat', weight: 3 },
              { channel: 'b', upstream_model: 'sandbox-chat', weight: 1 },
            ],
          },
          'routed-video': {
            ...catalogue.models['sandbox-video'],
            channel: undefined,
            channels: [
              { channel: 'ark-a', upstream_model: 'sandbox-video' },
              { channel: 'ark-b', upstream_model: 'sandbox-video', priority: 1 },
            ],
          },
        },
      };
    });
  });
  after(async () => {
    await gw.close();
    await b.close();
  });
  const faultA = (rule: object) => gw.sandboxControl('POST', '/__sandbox/faults', rule);
  const faultB = (rule: object) => request(`${b.url}/__sandbox/faults`, { method: 'POST', body: JSON.stringify(rule) }).then((r) => r.body.json());
  const requestsTo = async (base: string) => ((await (await request(`${base}/__sandbox/requests`)).body.json()) as { data: any[] }).data;
  beforeEach(async () => {
    for (const base of [gw.sandbox.url, b.url]) {
      await request(`${base}/__sandbox/faults`, { method: 'DELETE' }).then((r) => r.body.dump());
      await request(`${base}/__sandbox/requests`, { method: 'DELETE' }).then((r) => r.body.dump());
    }
  });

  /** The call's usage row and its ledger rows, once its hold has ended. */
  async function billOf(accountId: string) {
    await gw.settled(accountId);
    const usage = await listUsage(gw.gateway.store.db, { accountId });
    const ledger = (await listLedger(gw.gateway.store, { accountId })).filter((row) => row.kind !== 'credit');
    return { usage, kinds: ledger.map((row) => row.kind).sort(), balance: (await gw.balance(accountId)).balance_micros };
  }

  test('a 5xx from the first channel moves the call to the next; one hold, billed once at the model’s price', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    await faultA({ status: 503 });
    const answer = await gw.call(key, 'POST', '/v1/chat/completions', CHAT);
    assert.equal(answer.status, 200);
    const bill = await billOf(accountId);
    assert.deepEqual(bill.kinds, ['hold', 'settle']);
    assert.deepEqual(
      bill.usage.map((u) => [u.channel, u.attempts, u.amount_micros]),
      [['b', 2, CHAT_CHARGE]],
    );
    assert.equal(bill.balance, 1_000_000 - CHAT_CHARGE);
    assert.equal((await requestsTo(b.url)).length, 1);
  });

  test('a channel that refuses connections is passed over for the next', async () => {
    const { accountId, key } = await gw.account();
    assert.equal((await gw.call(key, 'POST', '/v1/chat/completions', { ...CHAT, model: 'dead-first' })).status, 200);
    assert.deepEqual(
      (await billOf(accountId)).usage.map((u) => [u.channel, u.attempts]),
      [['b', 2]],
    );
  });

  test('a channel that sends no headers within its timeout is passed over for the next', async () => {
    const { accountId, key } = await gw.account();
    await faultA({ hang: true });
    assert.equal((await gw.call(key, 'POST', '/v1/chat/completions', CHAT)).status, 200);
    assert.deepEqual(
      (await billOf(accountId)).usage.map((u) => [u.channel, u.attempts]),
      [['b', 2]],
    );
  });

  test('a key rate-limited with 429 moves the call to the channel’s next key, not the next channel', async () => {
    const { accountId, key } = await gw.account();
    // Whichever key the rotation starts with, both answer only through the second one.
    await faultA({ api_key: KEYS.a1, status: 429, headers: { 'retry-after': '30' } });
    for (let i = 0; i < 2; i++) assert.equal((await gw.call(key, 'POST', '/v1/chat/completions', CHAT)).status, 200);
    const { usage } = await billOf(accountId);
    assert.ok(
      usage.every((u) => u.channel === 'a'),
      'served by channel a every time',
    );
    const keysSent = (await requestsTo(gw.sandbox.url)).map((r) => String(r.headers.authorization).replace('Bearer ', ''));
    assert.ok(keysSent.includes(KEYS.a2) && keysSent.filter((k) => k === KEYS.a2).length === 2, `keys sent: ${keysSent}`);
    assert.equal((await requestsTo(b.url)).length, 0);
  });

  test('a key the upstream refuses (401) moves the call to the channel’s next key', async () => {
    const { accountId, key } = await gw.account();
    await faultA({ api_key: KEYS.a2, status: 401 });
    for (let i = 0; i < 2; i++) assert.equal((await gw.call(key, 'POST', '/v1/chat/completions', CHAT)).status, 200);
    const { usage } = await billOf(accountId);
    assert.deepEqual(usage.map((u) => u.channel).sort(), ['a', 'a']);
  });

  test('the caller’s own 400 is returned as it came, and no other channel is asked', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    await faultA({ status: 400, body: { error: { message: 'max_tokens is too large', type: 'invalid_request_error' } } });
    const answer = await gw.call(key, 'POST', '/v1/chat/completions', CHAT);
    assert.equal(answer.status, 400);
    assert.match(answer.body.error, /max_tokens is too large/);
    assert.equal((await requestsTo(b.url)).length, 0);
    const bill = await billOf(accountId);
    assert.deepEqual([bill.kinds, bill.balance], [['hold', 'release'], 1_000_000]);
  });

  test('a stream cut after its first byte is not retried: it ends, billed for what it delivered', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    await faultA({ drop_after_chunks: 3 });
    const res = await request(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...CHAT, stream: true, messages: [{ role: 'user', content: '[[words:50]]' }] }),
    });
    assert.equal(res.statusCode, 200);
    await res.body.text().catch(() => '');
    const bill = await billOf(accountId);
    assert.equal((await requestsTo(b.url)).length, 0, 'nothing sent to the next channel');
    assert.equal(bill.kinds.length, 2, 'one hold, ended once');
    assert.ok(bill.balance <= 1_000_000);
  });

  test('a stream whose first channel fails before its first byte is served whole by the next', async () => {
    const { accountId, key } = await gw.account();
    await faultA({ status: 500 });
    const res = await request(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...CHAT, stream: true }),
    });
    assert.equal(res.statusCode, 200);
    assert.match(await res.body.text(), /data: \[DONE\]/);
    assert.deepEqual(
      (await billOf(accountId)).usage.map((u) => [u.channel, u.attempts]),
      [['b', 2]],
    );
  });

  test('when every channel fails the caller gets one 502, and the hold is released', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    await faultA({ status: 500 });
    await faultB({ status: 502 });
    const answer = await gw.call(key, 'POST', '/v1/chat/completions', CHAT);
    assert.equal(answer.status, 502);
    const bill = await billOf(accountId);
    assert.deepEqual([bill.kinds, bill.balance, bill.usage.length], [['hold', 'release'], 1_000_000, 0]);
    const failed = gw.logs.filter((line) => line.msg === 'channel failed; trying the next channel' && line.channel === 'a');
    assert.ok(failed.length >= 1, 'the failed attempt is logged with its channel');
  });

  test('calls on channels of one priority weighted 3:1 are served 75 % ± 7 % by the first over 300 calls', async () => {
    const { accountId, key } = await gw.account();
    for (let i = 0; i < 30; i++) {
      const answers = await Promise.all(Array.from({ length: 10 }, () => gw.call(key, 'POST', '/v1/chat/completions', { ...CHAT, model: 'weighted-chat' })));
      assert.ok(answers.every((a) => a.status === 200));
    }
    await gw.settled(accountId);
    const usage = await listUsage(gw.gateway.store.db, { accountId, limit: 1_000 });
    const share = usage.filter((u) => u.channel === 'a').length / usage.length;
    assert.equal(usage.length, 300);
    assert.ok(Math.abs(share - 0.75) <= 0.07, `channel a served ${(share * 100).toFixed(1)} %`);
    assert.ok(
      usage.every((u) => u.attempts === 1),
      'every call served at its first attempt',
    );
  });

  test('a task is created on the next channel when the first refuses it, and is polled only there', async () => {
    const { accountId, key } = await gw.account();
    await faultA({ status: 503, path: '/api/v3/contents/generations/tasks' });
    const created = await gw.call(key, 'POST', '/v1/videos/generations', {
      model: 'routed-video',
      content: [{ type: 'text', text: 'a bridge at dawn' }],
      duration: 5,
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const id = created.body.id ?? created.body.task_id;
    const row = await gw.gateway.store.db.selectFrom('tasks').select(['channel', 'upstream_id']).where('id', '=', id).executeTakeFirstOrThrow();
    assert.equal(row.channel, 'ark-b');
    await eventually(async () => (await gw.call(key, 'GET', `/v1/videos/generations/${id}`)).body.status === 'succeeded', 10_000);
    const polledOnA = (await requestsTo(gw.sandbox.url)).filter((r) => r.method === 'GET');
    assert.equal(polledOnA.length, 0, 'no poll reached the channel that refused the task');
    assert.ok((await requestsTo(b.url)).some((r) => r.method === 'GET' && String(r.path).includes(row.upstream_id!)));
    await gw.settled(accountId);
  });
});
