// Channel health end to end: sandbox-chat served by two channels on two sandboxes, the preferred
// one made to answer 500s. Calls keep succeeding on the other; the failing channel's circuit opens
// (admin view, /metrics), one probe goes to it after each cool-down, and it closes once the fault
// is cleared. The operator's disable and enable act at once; with every channel out a call is a
// 502 with Retry-After. Every call is billed exactly.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sandboxCatalogue } from '../../src/config/sandbox-catalogue.js';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.js';
import { ADMIN_AUTH, ADMIN_TOKEN, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { callJson } from '../helpers/serving.js';

const CHAT = { model: 'sandbox-chat', messages: [{ role: 'user', content: 'hello there' }] };
const PREFERRED = 'sandbox-openai-preferred';
const COOLDOWN_MS = 200;

describe('channel health over two channels', () => {
  let preferred: Sandbox;
  let gw: TestGateway;
  let account: { accountId: string; key: string };
  let perCall = 0;
  let calls = 0;
  const credit = 10_000_000;

  /** Chat requests each sandbox has received so far. */
  const received = async () => {
    const count = async (url: string) =>
      (await callJson(url, '', 'GET', '/__sandbox/requests')).body.data.filter((r: { path: string }) => r.path.startsWith('/v1/chat')).length;
    return { preferred: await count(preferred.url), fallback: await count(gw.sandbox.url) };
  };
  /** One chat call; it must succeed, and which sandbox(es) it reached is returned. */
  const chat = async () => {
    const before = await received();
    const { status, body } = await gw.call(account.key, 'POST', '/v1/chat/completions', CHAT);
    assert.equal(status, 200, JSON.stringify(body));
    calls++;
    const now = await received();
    return { preferred: now.preferred - before.preferred, fallback: now.fallback - before.fallback };
  };
  const channel = async (name = PREFERRED) => (await gw.admin('GET', '/admin/channels')).body.data.find((c: { name: string }) => c.name === name);
  const metrics = async () => {
    const res = await fetch(`${gw.url}/metrics`, ADMIN_AUTH);
    return res.text();
  };
  const preferredFaults = (method: string, body?: unknown) => callJson(preferred.url, '', method, '/__sandbox/faults', body);

  before(async () => {
    preferred = await startSandbox({ port: 0 });
    gw = await startTestGateway((url) => {
      const catalogue = sandboxCatalogue(url);
      return {
        channels: { ...catalogue.channels, [PREFERRED]: { kind: 'openai', base_url: preferred.url, api_keys: ['sk-preferred-0001', 'sk-preferred-0002'] } },
        models: {
          ...catalogue.models,
          'sandbox-chat': {
            type: 'chat',
            price: { input_token: 2_000_000, output_token: 8_000_000 },
            channels: [
              { channel: PREFERRED, priority: 0 },
              { channel: 'sandbox-openai', priority: 1 },
            ],
          },
        },
        routing: { failures_to_open: 2, cooldown_ms: COOLDOWN_MS, max_cooldown_ms: 2 * COOLDOWN_MS },
      };
    });
    account = await gw.account({ creditMicros: credit });
    // A first call while every channel is well: what each identical call costs.
    assert.deepEqual(await chat(), { preferred: 1, fallback: 0 });
    perCall = credit - (await gw.settled(account.accountId)).balance_micros;
    assert.ok(perCall > 0);
  });
  after(async () => {
    await gw?.close();
    await preferred?.close();
  });

  test('a channel answering 500s opens after two failures while every call succeeds on the other channel', async () => {
    await preferredFaults('POST', { kind: 'chat', status: 500 });
    assert.deepEqual(await chat(), { preferred: 1, fallback: 1 });
    assert.equal((await channel()).state, 'closed');
    assert.deepEqual(await chat(), { preferred: 1, fallback: 1 });
    const view = await channel();
    assert.equal(view.state, 'open');
    assert.ok(Date.parse(view.opens_until) > Date.now(), view.opens_until);
    assert.deepEqual(view.last_error.message, 'upstream answered 500');
    assert.ok(view.error_rate > 0);
    // Keys are named by fingerprint only: never the key, nor its end.
    assert.equal(view.keys.length, 2);
    for (const key of view.keys) assert.match(key.key, /^[0-9a-f]{8}$/);
    assert.ok(!JSON.stringify(view).includes('preferred-000'));
    const text = await metrics();
    assert.match(text, new RegExp(`tollroute_channel_circuit_state\\{channel="${PREFERRED}"\\} 2`));
    assert.match(text, new RegExp(`tollroute_channel_attempts_total\\{channel="${PREFERRED}",outcome="server_error"\\} 2`));
    assert.match(text, /tollroute_channel_attempts_total\{channel="sandbox-openai",outcome="ok"\} 2/);
  });

  test('while open the failing channel is sent nothing', async () => {
    assert.deepEqual(await chat(), { preferred: 0, fallback: 1 });
  });

  test('after the cool-down exactly one probe goes to it, and a failed probe re-opens it for longer', async () => {
    await new Promise((resolve) => setTimeout(resolve, COOLDOWN_MS + 20));
    assert.equal((await channel()).state, 'half_open');
    const openedAt = Date.now();
    assert.deepEqual(await chat(), { preferred: 1, fallback: 1 });
    const view = await channel();
    assert.equal(view.state, 'open');
    assert.ok(Date.parse(view.opens_until) >= openedAt + 2 * COOLDOWN_MS - 50, `${view.opens_until} vs ${new Date(openedAt).toISOString()}`);
    assert.deepEqual(await chat(), { preferred: 0, fallback: 1 });
  });

  test('once the fault is cleared the next probe succeeds and the channel closes', async () => {
    await preferredFaults('DELETE');
    await new Promise((resolve) => setTimeout(resolve, 2 * COOLDOWN_MS + 20));
    assert.deepEqual(await chat(), { preferred: 1, fallback: 0 });
    assert.equal((await channel()).state, 'closed');
    assert.deepEqual(await chat(), { preferred: 1, fallback: 0 });
    assert.match(await metrics(), new RegExp(`tollroute_channel_circuit_state\\{channel="${PREFERRED}"\\} 0`));
  });

  test('an operator-disabled channel gets no traffic at once, and enabling it restores it', async () => {
    const disabled = await gw.admin('POST', `/admin/channels/${PREFERRED}/disable`);
    assert.equal(disabled.status, 200);
    assert.equal(disabled.body.name, PREFERRED);
    assert.equal(disabled.body.state, 'disabled');
    assert.deepEqual(await chat(), { preferred: 0, fallback: 1 });
    assert.match(await metrics(), new RegExp(`tollroute_channel_circuit_state\\{channel="${PREFERRED}"\\} 3`));
    const enabled = await gw.admin('POST', `/admin/channels/${PREFERRED}/enable`);
    assert.deepEqual([enabled.status, enabled.body.state], [200, 'closed']);
    assert.deepEqual(await chat(), { preferred: 1, fallback: 0 });
  });

  test('with every channel of the model disabled a call is answered 502 with Retry-After and costs nothing', async () => {
    for (const name of [PREFERRED, 'sandbox-openai']) assert.equal((await gw.admin('POST', `/admin/channels/${name}/disable`)).status, 200);
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' },
      body: JSON.stringify(CHAT),
    });
    const body = await res.json();
    assert.equal(res.status, 502, JSON.stringify(body));
    assert.equal(body.type, 'server_error');
    assert.match(res.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
    for (const name of [PREFERRED, 'sandbox-openai']) assert.equal((await gw.admin('POST', `/admin/channels/${name}/enable`)).status, 200);
  });

  test('with one channel’s circuit open and the other’s only key resting after a 429, a call is answered 502 with Retry-After', async () => {
    const fallbackFaults = (method: string, faults?: unknown) => callJson(gw.sandbox.url, '', method, '/__sandbox/faults', faults);
    await preferredFaults('POST', { kind: 'chat', status: 500 });
    await fallbackFaults('POST', { kind: 'chat', status: 429, headers: { 'retry-after': '1' } });
    // Two calls: the preferred channel fails twice (its circuit opens), the fallback's key is rested.
    for (let i = 0; i < 2; i++) assert.equal((await gw.call(account.key, 'POST', '/v1/chat/completions', CHAT)).status >= 400, true);
    assert.equal((await channel()).state, 'open');
    assert.ok((await channel('sandbox-openai')).keys[0].rested_until);
    const sent = await received();
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' },
      body: JSON.stringify(CHAT),
    });
    const body = await res.json();
    assert.equal(res.status, 502, JSON.stringify(body));
    assert.deepEqual(body, {
      error: 'upstream provider error: no channel of model sandbox-chat is available now; retry after Retry-After',
      type: 'server_error',
    });
    assert.equal(res.headers.get('retry-after'), '1'); // the cool-down (200 ms) and the key's rest (1 s) in whole seconds
    assert.deepEqual(await received(), sent); // no upstream was asked
    // Back to health for the tests after: faults cleared, the rest over, the preferred channel's probe closing it.
    await preferredFaults('DELETE');
    await fallbackFaults('DELETE');
    await new Promise((resolve) => setTimeout(resolve, 1_050));
    assert.deepEqual(await chat(), { preferred: 1, fallback: 0 });
  });

  test('an unknown channel cannot be disabled or enabled, and both need the admin token', async () => {
    assert.equal((await gw.admin('POST', '/admin/channels/nowhere/disable')).status, 404);
    assert.equal((await gw.admin('POST', '/admin/channels/nowhere/enable')).status, 404);
    const refused = await gw.call(ADMIN_TOKEN.replace('adm', 'bad'), 'POST', `/admin/channels/${PREFERRED}/disable`);
    assert.equal(refused.status, 401);
    assert.equal((await channel()).state, 'closed');
  });

  test('every call was billed exactly once, failovers and probes included', async () => {
    const settled = await gw.settled(account.accountId);
    assert.deepEqual([settled.held_micros, settled.balance_micros], [0, credit - calls * perCall]);
  });
});
