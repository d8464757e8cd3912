// A channel whose connections are all busy: calls wait for one, measured in /metrics, and a call
// that waits past connection_wait_ms is a 502 with its hold released, never sent upstream.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import { sandboxCatalogue } from '../../src/config/sandbox-catalogue.js';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.js';
import { ADMIN_AUTH, startTestGateway, type TestGateway } from '../helpers/gateway.js';

/** The count and the number at or under `le` seconds of one channel's connection waits. */
function waits(metrics: string, channel: string, le: string) {
  const value = (name: string, extra = '') => Number(new RegExp(`^${name}\\{${extra}channel="${channel}"\\} (\\S+)$`, 'm').exec(metrics)?.[1] ?? 0);
  return {
    count: value('tollroute_upstream_connection_wait_seconds_count'),
    atMost: value('tollroute_upstream_connection_wait_seconds_bucket', `le="${le}",`),
    timeouts: value('tollroute_upstream_connection_wait_timeouts_total'),
  };
}

describe('waiting for an upstream connection', () => {
  let sandbox: Sandbox;
  let gw: TestGateway;
  before(async () => {
    sandbox = await startSandbox({ port: 0 });
    const { channels } = sandboxCatalogue(sandbox.url);
    const openai = channels!['sandbox-openai']!;
    gw = await startTestGateway({
      channels: {
        // two calls at once; a third waits 300 ms at most
        narrow: { ...openai, connections: 2, connection_wait_ms: 300 },
        // one call at once; a second may wait 5 s
        single: { ...openai, connections: 1, connection_wait_ms: 5_000 },
      },
      models: {
        'narrow-chat': { type: 'chat', channel: 'narrow', upstream_model: 'sandbox-chat', price: { input_token: 2_000_000, output_token: 8_000_000 } },
        'single-chat': { type: 'chat', channel: 'single', upstream_model: 'sandbox-chat', price: { input_token: 2_000_000, output_token: 8_000_000 } },
      },
    });
    // every chat answer takes 1.5 s: a call holds its connection that long
    await request(`${sandbox.url}/__sandbox/faults`, { method: 'POST', body: JSON.stringify({ kind: 'chat', delay_ms: 1_500 }) }).then((res) =>
      res.body.dump(),
    );
  });
  after(async () => {
    await gw?.close();
    await sandbox?.close();
  });

  const chat = (key: string, model: string) =>
    gw.call(key, 'POST', '/v1/chat/completions', { model, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
  const sandboxCalls = async () => ((await (await request(`${sandbox.url}/__sandbox/requests`)).body.json()) as { data: unknown[] }).data.length;

  test('a call past the channel’s connections waits for one, and /metrics shows the wait', async () => {
    const { key } = await gw.account();
    const first = chat(key, 'single-chat');
    await new Promise((resolve) => setTimeout(resolve, 100)); // the first holds the one connection
    const startedAt = performance.now();
    const [a, b] = await Promise.all([first, chat(key, 'single-chat')]);
    const secondMs = performance.now() - startedAt;
    assert.deepEqual([a.status, b.status], [200, 200]);
    assert.ok(secondMs >= 2_500, `the second answered after ${secondMs} ms: it waited for the first`);
    const metrics = await (await request(`${gw.url}/metrics`, ADMIN_AUTH)).body.text();
    const single = waits(metrics, 'single', '0.25');
    assert.equal(single.count, 2);
    assert.equal(single.atMost, 1, 'one call waited over 250 ms for its connection');
    assert.equal(single.timeouts, 0);
  });

  test('a call that waits past connection_wait_ms is a 502, never sent, and its hold is released', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 10_000_000 });
    const before = await sandboxCalls();
    const running = [chat(key, 'narrow-chat'), chat(key, 'narrow-chat')];
    await new Promise((resolve) => setTimeout(resolve, 100)); // both connections busy for 1.5 s
    const startedAt = performance.now();
    const refused = await chat(key, 'narrow-chat');
    const refusedMs = performance.now() - startedAt;
    assert.deepEqual(refused, { status: 502, body: { error: 'upstream provider error', type: 'server_error' } });
    assert.ok(refusedMs >= 250 && refusedMs < 1_400, `refused after ${refusedMs} ms, before a connection freed`);
    assert.deepEqual(
      (await Promise.all(running)).map((res) => res.status),
      [200, 200],
    );
    assert.equal((await sandboxCalls()) - before, 2, 'the refused call never reached the upstream');

    const account = await gw.settled(accountId);
    const ledger = (await gw.admin('GET', `/admin/accounts/${accountId}/ledger`)).body.data as { kind: string; amount_micros: number }[];
    assert.deepEqual(ledger.map((row) => row.kind).sort(), ['credit', 'hold', 'hold', 'hold', 'release', 'settle', 'settle']);
    const charged = ledger.filter((row) => row.kind === 'settle').reduce((sum, row) => sum - row.amount_micros, 0);
    assert.equal(account.balance_micros, 10_000_000 - charged, 'the refused call cost nothing');
    const narrow = waits(await (await request(`${gw.url}/metrics`, ADMIN_AUTH)).body.text(), 'narrow', '0.25');
    assert.equal(narrow.timeouts, 1);
    assert.equal(narrow.count, 3);
  });

  test('a stream whose caller leaves while it waits for a connection was never sent, and costs nothing', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 10_000_000 });
    const occupying = chat(key, 'single-chat');
    await new Promise((resolve) => setTimeout(resolve, 100)); // the one connection is busy for 1.5 s
    const before = await sandboxCalls();
    await assert.rejects(
      request(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        signal: AbortSignal.timeout(300),
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'single-chat', stream: true, max_tokens: 10, messages: [{ role: 'user', content: 'queued' }] }),
      }),
    );
    assert.equal((await occupying).status, 200);
    const account = await gw.settled(accountId);
    const ledger = (await gw.admin('GET', `/admin/accounts/${accountId}/ledger`)).body.data as { kind: string; amount_micros: number; note: string | null }[];
    assert.ok(ledger.some((row) => row.kind === 'release' && row.note === 'the caller left before the call was sent'));
    const charged = ledger.filter((row) => row.kind === 'settle').reduce((sum, row) => sum - row.amount_micros, 0);
    assert.equal(account.balance_micros, 10_000_000 - charged, 'only the occupying call was billed');
    assert.equal((await sandboxCalls()) - before, 0, 'the stream never reached the upstream');
  });
});
