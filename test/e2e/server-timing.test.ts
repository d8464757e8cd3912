// Every answer says what the gateway itself cost beside the upstream (W3C Server-Timing), and
// /metrics keeps the gateway's own time as a histogram.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import { ADMIN_AUTH, startTestGateway, type TestGateway } from '../helpers/gateway.js';

/** `{ gateway: ms, upstream?: ms }` from a Server-Timing value. */
function timings(header: unknown): Record<string, number> {
  assert.equal(typeof header, 'string', 'a server-timing header');
  const entries = (header as string).split(',').map((entry) => {
    const match = /^\s*([a-z]+);dur=(\d+(?:\.\d+)?)\s*$/.exec(entry);
    assert.ok(match, `a well-formed entry: ${entry}`);
    return [match[1]!, Number(match[2])] as const;
  });
  return Object.fromEntries(entries);
}

describe('Server-Timing', () => {
  let gw: TestGateway;
  let key: string;
  before(async () => {
    gw = await startTestGateway();
    ({ key } = await gw.account({ creditMicros: 10_000_000 }));
    await (await chat(false)).body.dump(); // the first call builds the tokenizer (`serve` does that before listening)
  });
  after(() => gw.close());

  const chat = (stream: boolean) =>
    request(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ model: 'sandbox-chat', messages: [{ role: 'user', content: 'hello' }], stream }),
    });

  test('a call answered in one piece names the upstream time apart from the gateway time', async () => {
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'chat', delay_ms: 300, times: 1 });
    const res = await chat(false);
    await res.body.dump();
    const { gateway, upstream } = timings(res.headers['server-timing']);
    assert.ok(upstream !== undefined && upstream >= 300, `upstream ${upstream} ms covers the upstream's 300 ms`);
    assert.ok(gateway! < upstream, `gateway ${gateway} ms is not counted in the upstream's time`);
  });

  test('a stream carries it in its headers, the upstream time up to its first byte', async () => {
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'chat', delay_ms: 300, times: 1 });
    const res = await chat(true);
    assert.match(String(res.headers['content-type']), /text\/event-stream/);
    await res.body.dump();
    const { gateway, upstream } = timings(res.headers['server-timing']);
    assert.ok(upstream !== undefined && upstream >= 300, `upstream ${upstream} ms`);
    assert.ok(gateway !== undefined && gateway < upstream);
  });

  test('an answer with no upstream call carries the gateway time alone', async () => {
    const res = await request(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    await res.body.dump();
    assert.equal(res.statusCode, 401);
    assert.deepEqual(Object.keys(timings(res.headers['server-timing'])), ['gateway']);
  });

  test('/metrics counts the gateway time of every answer', async () => {
    const count = async () =>
      Number(/^tollroute_gateway_time_seconds_count (\d+)/m.exec(await (await request(`${gw.url}/metrics`, ADMIN_AUTH)).body.text())?.[1]);
    const before = await count();
    await (await chat(false)).body.dump();
    await (await chat(true)).body.dump();
    // the first /metrics answer is itself counted once it is sent
    assert.equal((await count()) - before, 3);
  });
});
