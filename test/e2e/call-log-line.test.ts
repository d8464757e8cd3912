// One log line per metered call: the request's own line carries the hold's end, so a busy gateway
// writes half the lines it did. A hold that ends after that line went out (a caller who left
// mid-stream) still gets a line of its own.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import { eventually, startTestGateway, type TestGateway } from '../helpers/gateway.js';

const chat = (content: string, stream = false) => JSON.stringify({ model: 'sandbox-chat', stream, messages: [{ role: 'user', content }] });

describe('the log line of a metered call', () => {
  let gw: TestGateway;
  let key: string;
  before(async () => {
    gw = await startTestGateway();
    ({ key } = await gw.account());
  });
  after(() => gw.close());

  const post = (body: string) =>
    request(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body });
  const linesOf = (requestId: string) => gw.logs.filter((line) => line.reqId === requestId);

  test('a call answered in one piece writes one line: the request, its answer and its settled hold', async () => {
    const res = await post(chat('one two three'));
    await res.body.text();
    const requestId = String(res.headers['x-request-id']);
    const lines = await eventually(() => (linesOf(requestId).length > 0 ? linesOf(requestId) : undefined));
    assert.equal(lines.length, 1);
    const [line] = lines as Record<string, any>[];
    assert.equal(line!.msg, 'request completed');
    assert.deepEqual(line!.res, { statusCode: 200, complete: true });
    assert.equal(line!.bill, 'settle');
    assert.equal(line!.model, 'sandbox-chat');
    assert.equal(line!.channel, 'sandbox-openai');
    assert.match(String(line!.holdId), /^hold_/);
    assert.ok(Number.isInteger(line!.chargeMicros) && line!.chargeMicros > 0);
    assert.equal(line!.landed, true);
  });

  test('a stream read to its end writes one line too, with its settled hold', async () => {
    const res = await post(chat('tell me a story [[words:30]]', true));
    assert.match(await res.body.text(), /data: \[DONE\]/);
    const requestId = String(res.headers['x-request-id']);
    const lines = await eventually(() => (linesOf(requestId).length > 0 ? linesOf(requestId) : undefined));
    assert.equal(lines.length, 1);
    assert.equal(lines[0]!.msg, 'request completed');
    assert.equal(lines[0]!.bill, 'settle');
    assert.equal(lines[0]!.reason, 'completed');
  });

  test('a hold that ends after the request line went out (the caller left mid-stream) has a line of its own', async () => {
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'chat', chunk_delay_ms: 50, times: 1 });
    const controller = new AbortController();
    const res = await request(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: chat('tell me a story [[words:200]]', true),
      signal: controller.signal,
    });
    const requestId = String(res.headers['x-request-id']);
    for await (const _chunk of res.body) break; // the first data, then leave
    controller.abort();
    const lines = await eventually(() => (linesOf(requestId).length >= 2 ? linesOf(requestId) : undefined));
    const request_ = lines.find((line) => line.msg === 'request completed');
    const hold = lines.find((line) => String(line.msg).startsWith('hold '));
    assert.ok(request_ && request_.holdId === undefined, 'the request line went out before the hold ended');
    assert.equal((request_.res as { complete: boolean }).complete, false, 'the request line says the answer was cut short');
    assert.equal(hold?.msg, 'hold settled');
    assert.equal(hold?.reason, 'the caller left');
  });
});
