// POST /v1/chat/completions end to end: official openai client → gateway → sandbox upstream.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import OpenAI from 'openai';
import { request } from 'undici';
import { eventually, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { postForEvents } from '../helpers/sse.js';

const INPUT_PRICE = 2; // micros per token, DESIGN section 9
const OUTPUT_PRICE = 8;
const bill = (usage: { prompt_tokens: number; completion_tokens: number }) => usage.prompt_tokens * INPUT_PRICE + usage.completion_tokens * OUTPUT_PRICE;

describe('chat completions', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway();
  });
  after(() => gw.close());
  beforeEach(() => gw.sandboxControl('DELETE', '/__sandbox/faults'));

  const client = (key: string) => new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });

  test('a plain completion moves the balance by exactly input × price + output × price', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    const completion = await client(key).chat.completions.create({
      model: 'sandbox-chat',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'tell me about toll roads' },
      ],
    });
    assert.equal(completion.choices[0]?.message.content, 'Sandbox says: tell me about toll roads');
    assert.ok(completion.usage && completion.usage.prompt_tokens > 0);
    assert.deepEqual(await gw.balance(accountId), { ...(await gw.balance(accountId)), balance_micros: 1_000_000 - bill(completion.usage), held_micros: 0 });
  });

  test('a streamed completion gives the same text and is billed on the upstream usage', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    const messages = [{ role: 'user' as const, content: 'stream these words please' }];
    const plain = await client(key).chat.completions.create({ model: 'sandbox-chat', messages });
    const stream = await client(key).chat.completions.create({ model: 'sandbox-chat', messages, stream: true, stream_options: { include_usage: true } });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    let chunks = 0;
    for await (const chunk of stream) {
      chunks += 1;
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    assert.equal(text, plain.choices[0]?.message.content);
    assert.ok(chunks > 3, 'the answer arrives in several chunks');
    assert.deepEqual(usage && { p: usage.prompt_tokens, c: usage.completion_tokens }, { p: plain.usage!.prompt_tokens, c: plain.usage!.completion_tokens });
    const { balance_micros, held_micros } = await eventually(async () => {
      const b = await gw.balance(accountId);
      return b.held_micros === 0 && b;
    });
    assert.equal(held_micros, 0);
    assert.equal(balance_micros, 1_000_000 - 2 * bill(plain.usage!));
  });

  test('a stream without include_usage gets no usage chunk but is still billed on usage', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    const messages = [{ role: 'user' as const, content: 'count on me' }];
    const stream = await client(key).chat.completions.create({ model: 'sandbox-chat', messages, stream: true });
    const seen = [];
    for await (const chunk of stream) seen.push(chunk);
    assert.ok(
      seen.every((chunk) => chunk.choices.length === 1 && !chunk.usage),
      'every chunk carries a choice and no usage',
    );
    const upstreamSaw = (await gw.sandboxControl('GET', '/__sandbox/requests')).data.at(-1);
    assert.deepEqual(upstreamSaw.body.stream_options, { include_usage: true });
    const usage = (await gw.admin('GET', `/admin/accounts/${accountId}/usage`)).body.data[0];
    assert.equal(usage.amount_micros, bill({ prompt_tokens: usage.units.input_token, completion_tokens: usage.units.output_token }));
    assert.equal(usage.units.output_token, 5); // "Sandbox says: count on me"
    assert.equal((await gw.balance(accountId)).balance_micros, 1_000_000 - usage.amount_micros);
  });

  test('the upstream gets the channel credentials, never the caller key', async () => {
    const { key } = await gw.account();
    await client(key).chat.completions.create({ model: 'sandbox-chat', messages: [{ role: 'user', content: 'hi' }] });
    const upstreamSaw = (await gw.sandboxControl('GET', '/__sandbox/requests')).data.at(-1);
    assert.equal(upstreamSaw.headers.authorization, 'Bearer sk-sandbox');
    assert.ok(!JSON.stringify(upstreamSaw).includes(key));
  });

  test('an upstream failure answers 502 and releases the hold', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'chat', status: 500, times: 1 });
    await assert.rejects(
      client(key).chat.completions.create({ model: 'sandbox-chat', messages: [{ role: 'user', content: 'hi' }] }),
      (error: any) => error.status === 502 && error.message.includes('upstream provider error'),
    );
    assert.deepEqual(await gw.balance(accountId), { ...(await gw.balance(accountId)), balance_micros: 1_000_000, held_micros: 0 });
    const ledger = (await gw.admin('GET', `/admin/accounts/${accountId}/ledger`)).body.data;
    assert.deepEqual(
      ledger.map((row: any) => row.kind),
      ['release', 'hold', 'credit'],
    );
  });

  test('a stream cut by the upstream before its first byte is a 502 with the hold released', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'chat', drop_after_chunks: 0, times: 1 });
    await assert.rejects(
      client(key).chat.completions.create({ model: 'sandbox-chat', messages: [{ role: 'user', content: 'hi' }], stream: true }),
      (error: any) => error.status === 502,
    );
    assert.equal((await gw.balance(accountId)).balance_micros, 1_000_000);
  });

  test('a stream cut by the upstream midway is released in full: the caller pays nothing for a failed call', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'chat', drop_after_chunks: 4, times: 1 });
    const stream = await client(key).chat.completions.create({ model: 'sandbox-chat', messages: [{ role: 'user', content: '[[words:50]]' }], stream: true });
    await assert.rejects(async () => {
      for await (const _ of stream);
    });
    assert.deepEqual(await gw.settled(accountId), { ...(await gw.balance(accountId)), balance_micros: 1_000_000, held_micros: 0 });
    assert.deepEqual((await gw.admin('GET', `/admin/accounts/${accountId}/usage`)).body.data, []);
  });

  test('a stream the upstream breaks after the headers ends with an error event, not a clean end', async () => {
    const { key } = await gw.account({ creditMicros: 1_000_000 });
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'chat', drop_after_chunks: 3, times: 1 });
    const { status, events } = await postForEvents(
      `${gw.url}/v1/chat/completions`,
      { model: 'sandbox-chat', messages: [{ role: 'user', content: '[[words:20]]' }], stream: true },
      { authorization: `Bearer ${key}` },
    );
    assert.equal(status, 200);
    assert.deepEqual(events.at(-1)!.data, { error: { message: 'upstream provider error', type: 'server_error', param: null, code: null } });
    assert.ok(!events.some((e) => e.data === '[DONE]'));
  });

  test('a client that disconnects mid-stream stops the upstream call and is billed for what was generated', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    await gw.sandboxControl('DELETE', '/__sandbox/requests');
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'chat', chunk_delay_ms: 20, times: 1 });
    const controller = new AbortController();
    const stream = await client(key).chat.completions.create(
      { model: 'sandbox-chat', messages: [{ role: 'user', content: '[[words:500]]' }], stream: true },
      { signal: controller.signal },
    );
    let received = 0;
    try {
      for await (const chunk of stream) {
        if (chunk.choices[0]?.delta.content) received += 1;
        if (received === 5) controller.abort();
      }
    } catch {
      // the client's own abort may surface as an error or as the end of iteration
    }
    assert.equal(received, 5);
    const usage = await eventually(async () => (await gw.admin('GET', `/admin/accounts/${accountId}/usage`)).body.data[0]);
    assert.ok(usage.units.output_token >= 5 && usage.units.output_token < 500, `billed ${usage.units.output_token} output tokens`);
    assert.equal(usage.amount_micros, bill({ prompt_tokens: usage.units.input_token, completion_tokens: usage.units.output_token }));
    const upstreamCall = await eventually(async () => {
      const [last] = (await gw.sandboxControl('GET', '/__sandbox/requests')).data.slice(-1);
      return last?.aborted && last;
    });
    assert.equal(upstreamCall.aborted, true);
    assert.equal((await gw.balance(accountId)).held_micros, 0);
  });

  test('a client that leaves before a plain answer does not stop it: it runs to its end and is billed its real usage', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    const body = { model: 'sandbox-chat', messages: [{ role: 'user', content: 'slow one' }], max_tokens: 50 };
    await gw.sandboxControl('DELETE', '/__sandbox/requests');
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'chat', delay_ms: 1_000, times: 1 });
    await assert.rejects(
      request(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        signal: AbortSignal.timeout(300),
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }),
    );
    const usage = await eventually(async () => (await gw.admin('GET', `/admin/accounts/${accountId}/usage`)).body.data[0]);
    const same = await client(key).chat.completions.create(body as any);
    assert.deepEqual(usage.units, { input_token: same.usage!.prompt_tokens, output_token: same.usage!.completion_tokens });
    assert.equal(usage.amount_micros, bill(same.usage!));
    const upstreamCalls = (await gw.sandboxControl('GET', '/__sandbox/requests')).data;
    assert.equal(upstreamCalls.filter((r: any) => r.aborted).length, 0, 'the upstream call was not stopped');
  });

  test('a call the balance cannot cover is refused with 402, says what it needs and the account has, and charges nothing', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 100 });
    const res = await request(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sandbox-chat', messages: [{ role: 'user', content: 'hi' }], max_tokens: 1_000 }),
    });
    assert.equal(res.statusCode, 402);
    const body = (await res.body.json()) as { error: string; type: string };
    const needed =
      /^insufficient balance -- please top up or upgrade the service plan: this call needs to hold (\d+) micros; the account has 100 micros available$/.exec(
        body.error,
      )?.[1];
    assert.deepEqual({ type: body.type, coversOutput: Number(needed) > 1_000 * OUTPUT_PRICE }, { type: 'billing_error', coversOutput: true });
    assert.equal((await gw.balance(accountId)).balance_micros, 100);
  });

  test('an Idempotency-Key returns the first answer and never charges twice', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    const send = (content: string) =>
      request(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': 'order-42' },
        body: JSON.stringify({ model: 'sandbox-chat', messages: [{ role: 'user', content }] }),
      });
    const first = await send('once only');
    const firstBody = await first.body.json();
    const second = await send('once only');
    assert.equal(second.statusCode, 200);
    assert.equal(second.headers['idempotent-replayed'], 'true');
    assert.deepEqual(await second.body.json(), firstBody);
    const usage = (await gw.admin('GET', `/admin/accounts/${accountId}/usage`)).body.data;
    assert.equal(usage.length, 1);
    assert.equal((await gw.balance(accountId)).balance_micros, 1_000_000 - usage[0].amount_micros);
    const different = await send('something else');
    assert.equal(different.statusCode, 422);
    assert.equal(((await different.body.json()) as any).type, 'invalid_request_error');
  });

  test('an Idempotency-Key whose first call failed upstream can be retried', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'chat', status: 503, times: 1 });
    const send = () =>
      request(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': 'retry-me' },
        body: JSON.stringify({ model: 'sandbox-chat', messages: [{ role: 'user', content: 'again' }] }),
      });
    assert.equal((await send()).statusCode, 502);
    assert.equal((await send()).statusCode, 200);
    assert.equal((await gw.admin('GET', `/admin/accounts/${accountId}/usage`)).body.data.length, 1);
  });

  test('an Idempotency-Key reused while the first call still runs is 409', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'chat', delay_ms: 400, times: 1 });
    const send = () =>
      request(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': 'slow-one' },
        body: JSON.stringify({ model: 'sandbox-chat', messages: [{ role: 'user', content: 'slowly' }] }),
      });
    const first = send();
    await eventually(async () => (await gw.sandboxControl('GET', '/__sandbox/requests')).data.some((r: any) => r.body?.messages?.[0]?.content === 'slowly'));
    const second = await send();
    assert.equal(second.statusCode, 409);
    assert.equal(((await second.body.json()) as any).type, 'invalid_request_error');
    assert.equal((await first).statusCode, 200);
    assert.equal((await gw.admin('GET', `/admin/accounts/${accountId}/usage`)).body.data.length, 1);
  });

  test('a key past its requests per minute gets 429 rate limit exceeded', async () => {
    const { key } = await gw.account({ rpm: 2 });
    const models = () =>
      request(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'sandbox-chat', messages: [{ role: 'user', content: 'hi' }] }),
      });
    assert.equal(((await (await models()).body.json()) as any).object, 'chat.completion');
    assert.equal((await models()).statusCode, 200);
    const third = await models();
    assert.equal(third.statusCode, 429);
    assert.deepEqual(await third.body.json(), { error: 'rate limit exceeded', type: 'rate_limit_error' });
  });

  test('a revoked key is refused at once', async () => {
    const { key, keyId } = await gw.account();
    await client(key).chat.completions.create({ model: 'sandbox-chat', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal((await gw.admin('DELETE', `/admin/keys/${keyId}`)).status, 200);
    await assert.rejects(
      client(key).chat.completions.create({ model: 'sandbox-chat', messages: [{ role: 'user', content: 'hi' }] }),
      (error: any) => error.status === 401,
    );
  });
});
