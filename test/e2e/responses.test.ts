// POST /v1/responses end to end with the official openai client.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import OpenAI from 'openai';
import { request } from 'undici';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { postForEvents } from '../helpers/sse.js';

const bill = (usage: { input_tokens: number; output_tokens: number }) => usage.input_tokens * 2 + usage.output_tokens * 8;

describe('responses', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway();
  });
  after(() => gw.close());
  beforeEach(() => gw.sandboxControl('DELETE', '/__sandbox/faults'));

  const client = (key: string) => new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });

  test('a plain response is passed through and billed exactly on its usage', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    const response = await client(key).responses.create({ model: 'sandbox-chat', input: 'describe a toll booth' });
    assert.equal(response.status, 'completed');
    assert.equal(response.model, 'sandbox-chat');
    assert.equal(response.output_text, 'Sandbox says: describe a toll booth');
    assert.ok(response.usage && response.usage.total_tokens === response.usage.input_tokens + response.usage.output_tokens);
    assert.equal((await gw.settled(accountId)).balance_micros, 1_000_000 - bill(response.usage));
  });

  test('a streamed response ends with response.completed carrying usage, with the same text', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    const input = [{ role: 'user' as const, content: [{ type: 'input_text' as const, text: 'stream the answer' }] }];
    const plain = await client(key).responses.create({ model: 'sandbox-chat', input, instructions: 'be brief' });
    const stream = await client(key).responses.create({ model: 'sandbox-chat', input, instructions: 'be brief', stream: true });
    let text = '';
    let completed: any;
    const types: string[] = [];
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.output_text.delta') text += event.delta;
      if (event.type === 'response.completed') completed = event.response;
    }
    assert.equal(types.at(-1), 'response.completed');
    assert.equal(types[0], 'response.created');
    assert.equal(text, plain.output_text);
    assert.deepEqual(completed.usage, plain.usage);
    assert.equal((await gw.settled(accountId)).balance_micros, 1_000_000 - 2 * bill(plain.usage!));
  });

  test('an upstream without the responses API has its 404 passed through and the hold released', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    const res = await request(`${gw.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sandbox-chat-noresponses', input: 'hello' }),
    });
    const direct = await request(`${gw.sandbox.url}/noresponses/v1/responses`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-sandbox', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sandbox-chat', input: 'hello' }),
    });
    assert.equal(res.statusCode, 404);
    assert.deepEqual(await res.body.json(), await direct.body.json());
    assert.equal((await gw.settled(accountId)).balance_micros, 1_000_000);
    const ledger = (await gw.admin('GET', `/admin/accounts/${accountId}/ledger`)).body.data;
    assert.deepEqual(
      ledger.map((row: any) => row.kind),
      ['release', 'hold', 'credit'],
    );
  });

  test('a stream the upstream breaks ends with an error event and is released in full', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'responses', drop_after_chunks: 7, times: 1 });
    const { events } = await postForEvents(
      `${gw.url}/v1/responses`,
      { model: 'sandbox-chat', input: '[[words:40]]', stream: true },
      { authorization: `Bearer ${key}` },
    );
    const last = events.at(-1)!;
    assert.equal(last.event, 'error');
    assert.deepEqual(
      { code: last.data.code, message: last.data.message, nested: last.data.error.message },
      { code: 'server_error', message: 'upstream provider error', nested: 'upstream provider error' },
    );
    assert.ok(events.filter((e) => e.event === 'response.output_text.delta').length > 0, 'output reached the caller before the break');
    assert.equal((await gw.settled(accountId)).balance_micros, 1_000_000);
    assert.deepEqual((await gw.admin('GET', `/admin/accounts/${accountId}/usage`)).body.data, []);
  });

  test('an error event mid-stream with no completed event is released, and the upstream’s error is the last event', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'responses', error_after_chunks: 5, times: 1 });
    const { events } = await postForEvents(
      `${gw.url}/v1/responses`,
      { model: 'sandbox-chat', input: '[[words:40]]', stream: true },
      { authorization: `Bearer ${key}` },
    );
    assert.equal(events.at(-1)!.event, 'response.failed');
    assert.ok(!events.some((e) => e.event === 'response.completed'));
    assert.equal((await gw.settled(accountId)).balance_micros, 1_000_000);
  });

  test("an upstream's refusal of the request is a 400 in our error shape, with nothing charged", async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'responses', status: 400, times: 1 });
    const res = await gw.call(key, 'POST', '/v1/responses', { model: 'sandbox-chat', input: 'hi' });
    assert.deepEqual(res, { status: 400, body: { error: 'upstream refused the request: sandbox fault: status 400', type: 'invalid_request_error' } });
    assert.equal((await gw.settled(accountId)).balance_micros, 1_000_000);
  });

  test('the hold is sized by max_output_tokens', async () => {
    // Enough for 20 output tokens, far from enough for 1000 (or the model's 4096-token cap, which is lowered).
    const { key } = await gw.account({ creditMicros: 2_000 });
    const send = (max_output_tokens?: number) =>
      client(key).responses.create({ model: 'sandbox-chat', input: 'hi', ...(max_output_tokens && { max_output_tokens }) });
    await assert.rejects(send(1_000), (error: any) => error.status === 402);
    const response = await send(20);
    assert.equal(response.status, 'completed');
  });

  test('a missing input is 400 naming it', async () => {
    const { key } = await gw.account();
    await assert.rejects(
      client(key).responses.create({ model: 'sandbox-chat' } as any),
      (error: any) => error.status === 400 && /input field is required/.test(error.message),
    );
  });
});
