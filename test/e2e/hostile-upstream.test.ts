// Upstreams that misbehave: broken usage numbers, an error as the first event, an empty 200,
// a call that outruns its deadline, and a client that leaves an idempotent call. Money stays right.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import { chatPromptTokens } from '../../src/billing/estimates.js';
import { countTokens } from '../../src/billing/tokens.js';
import { ADMIN_AUTH, eventually, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { type ScriptedUpstream, startScriptedUpstream } from '../helpers/scripted-upstream.js';
import { postForEvents } from '../helpers/sse.js';

/** An OpenAI-style upstream whose answer each test scripts through the user message. */
function startHostileUpstream(): Promise<ScriptedUpstream> {
  return startScriptedUpstream((body, res) => {
    const script = body.messages.at(-1).content as string;
    const chunk = (delta: object, extra: object = {}) =>
      `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', model: body.model, choices: [{ index: 0, delta, finish_reason: null }], ...extra })}\n\n`;
    /** A stream's last chunk, reporting `usage`, and its end marker. */
    const usageEnd = (usage: object) => `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', choices: [], usage })}\n\ndata: [DONE]\n\n`;
    /** A whole answer of "hi" that reports `usage`. */
    const completion = (usage: object) => {
      res.setHeader('content-type', 'application/json');
      const message = { role: 'assistant', content: 'hi' };
      res.end(JSON.stringify({ id: 'c1', object: 'chat.completion', model: body.model, choices: [{ index: 0, message, finish_reason: 'stop' }], usage }));
    };
    if (script === 'bad usage json') {
      completion({ prompt_tokens: 3, completion_tokens: 'n/a' });
    } else if (script === 'bad usage stream') {
      res.setHeader('content-type', 'text/event-stream');
      res.write(chunk({ role: 'assistant', content: 'hi' }));
      res.end(usageEnd({ prompt_tokens: -5, completion_tokens: 1e300 }));
    } else if (script === 'negative output stream') {
      res.setHeader('content-type', 'text/event-stream');
      res.write(chunk({ role: 'assistant', content: 'hi there' }));
      res.write(chunk({ content: ', friend' }));
      res.end(usageEnd({ prompt_tokens: 3, completion_tokens: -5 }));
    } else if (script === 'huge usage') {
      completion({ prompt_tokens: 1e15, completion_tokens: 1e15 });
    } else if (script === 'slow close') {
      // The whole answer and its end marker at once, then the connection held open a while.
      res.setHeader('content-type', 'text/event-stream');
      res.write(chunk({ role: 'assistant', content: 'hi' }));
      res.write(usageEnd({ prompt_tokens: 3, completion_tokens: 1 }));
      setTimeout(() => res.end(), 1_500);
    } else if (script === 'error first') {
      res.setHeader('content-type', 'text/event-stream');
      res.end(`data: ${JSON.stringify({ error: { message: 'overloaded', type: 'server_error' } })}\n\n`);
    } else if (script === 'empty') {
      res.setHeader('content-type', 'text/event-stream');
      res.end();
    } else {
      res.statusCode = 400;
      res.end('{}');
    }
  });
}

const hostileModel = { id: 'hostile', config: { tokenizer: 'o200k_base', image_input_tokens: 1_600, max_output_tokens: 4_096 } } as const;

describe('misbehaving upstreams', () => {
  let gw: TestGateway;
  let upstream: ScriptedUpstream;
  before(async () => {
    upstream = await startHostileUpstream();
    gw = await startTestGateway({
      channels: { hostile: { kind: 'openai', base_url: upstream.url, api_key: 'sk-hostile' } },
      models: { hostile: { type: 'chat', channel: 'hostile', price: { input_token: 2_000_000, output_token: 8_000_000 } } },
    });
  });
  after(async () => {
    await gw.close();
    upstream.close();
  });

  const chat = (key: string, content: string, stream = false) =>
    request(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'hostile', messages: [{ role: 'user', content }], max_tokens: 10, stream }),
    });

  test('a usage count that is not a number is billed by the gateway’s own count of the answer, not the hold, and the row keeps the figure', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    const res = await chat(key, 'bad usage json');
    assert.equal(res.statusCode, 200);
    await res.body.dump();
    const [usage] = (await gw.admin('GET', `/admin/accounts/${accountId}/usage`)).body.data;
    const answer = countTokens('hi');
    assert.ok(answer < 10, 'below the output cap the hold was for');
    assert.deepEqual(usage.units, { input_token: 3, output_token: answer });
    assert.equal(usage.flags, 'clamped,clamped:output_token="n/a"');
    assert.equal((await gw.settled(accountId)).balance_micros, 1_000_000 - (3 * 2 + answer * 8));
  });

  test('a negative usage count in a stream is billed by the output the gateway counted, not the hold, and the row keeps the figure', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    const { status } = await postForEvents(
      `${gw.url}/v1/chat/completions`,
      { model: 'hostile', messages: [{ role: 'user', content: 'negative output stream' }], max_tokens: 10, stream: true },
      { authorization: `Bearer ${key}` },
    );
    assert.equal(status, 200);
    await gw.settled(accountId);
    const [usage] = (await gw.admin('GET', `/admin/accounts/${accountId}/usage`)).body.data;
    const delivered = countTokens('hi there, friend');
    assert.ok(delivered < 10, 'below the output cap the hold was for');
    assert.deepEqual(usage.units, { input_token: 3, output_token: delivered });
    assert.equal(usage.amount_micros, 3 * 2 + delivered * 8);
    assert.equal(usage.flags, 'clamped,clamped:output_token=-5');
  });

  test('absurd usage in a stream is clamped to the request’s bounds and flagged, never thrown on', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    const messages = [{ role: 'user', content: 'bad usage stream' }];
    const { status } = await postForEvents(
      `${gw.url}/v1/chat/completions`,
      { model: 'hostile', messages, max_tokens: 10, stream: true },
      { authorization: `Bearer ${key}` },
    );
    assert.equal(status, 200);
    const usage = await eventually(async () => (await gw.admin('GET', `/admin/accounts/${accountId}/usage`)).body.data[0]);
    const prompt = chatPromptTokens({ messages }, hostileModel);
    assert.deepEqual(
      usage.units,
      { input_token: prompt, output_token: 10 },
      'a negative count is replaced by the gateway’s own; 1e300 by the output cap asked for',
    );
    assert.equal(usage.amount_micros, prompt * 2 + 10 * 8);
    assert.equal(usage.flags, 'clamped,clamped:input_token=-5,clamped:output_token=1e+300', 'each replaced figure kept as reported');
    assert.match(await (await request(`${gw.url}/metrics`, ADMIN_AUTH)).body.text(), /tollroute_usage_clamped_total\{model="hostile"\} [1-9]\d*/);
    assert.equal((await request(`${gw.url}/healthz`)).statusCode, 200, 'still serving');
  });

  test('an upstream reporting 10^15 tokens is charged at most the hold, in parallel too: the balance never goes below zero', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 20_000 });
    const results = await Promise.all(
      Array.from({ length: 10 }, () =>
        chat(key, 'huge usage').then(async (res) => {
          await res.body.dump();
          return res.statusCode;
        }),
      ),
    );
    assert.ok(results.includes(200));
    assert.ok(results.every((status) => status === 200 || status === 402));
    const account = await gw.settled(accountId);
    assert.ok(account.balance_micros >= 0, `balance ${account.balance_micros}`);
    const usage = (await gw.admin('GET', `/admin/accounts/${accountId}/usage`)).body.data;
    const hold = chatPromptTokens({ messages: [{ role: 'user', content: 'huge usage' }] }, hostileModel) * 2 + 10 * 8;
    for (const row of usage) {
      assert.equal(row.amount_micros, hold, 'the charge is the hold');
      assert.ok(row.unbilled_micros > 0);
      assert.equal(row.flags, 'clamped,clamped:input_token=1000000000000000,clamped:output_token=1000000000000000,capped');
    }
    assert.equal(account.balance_micros, 20_000 - usage.length * hold);
    assert.match(await (await request(`${gw.url}/metrics`, ADMIN_AUTH)).body.text(), /tollroute_unbilled_micros_total\{model="hostile"\} [1-9]/);
  });

  test('a completed stream is settled before its end marker reaches the caller', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    const res = await chat(key, 'slow close', true);
    let seen = '';
    for await (const chunk of res.body) {
      seen += chunk.toString();
      if (seen.includes('[DONE]')) break;
    }
    // The upstream holds its connection open 1.5 s past [DONE]; the bill must not wait for that.
    assert.deepEqual(await gw.balance(accountId), { ...(await gw.balance(accountId)), balance_micros: 1_000_000 - (3 * 2 + 1 * 8), held_micros: 0 });
  });

  test('a stream whose first event is an error charges nothing', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    const { events } = await postForEvents(
      `${gw.url}/v1/chat/completions`,
      { model: 'hostile', messages: [{ role: 'user', content: 'error first' }], stream: true },
      { authorization: `Bearer ${key}` },
    );
    assert.equal(events[0]!.data.error.message, 'overloaded');
    assert.equal((await gw.settled(accountId)).balance_micros, 1_000_000);
    assert.equal((await gw.admin('GET', `/admin/accounts/${accountId}/usage`)).body.data.length, 0);
  });

  test('an empty 200 stream is a 502 and charges nothing', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    const res = await chat(key, 'empty', true);
    assert.deepEqual(
      { status: res.statusCode, body: await res.body.json() },
      { status: 502, body: { error: 'upstream provider error', type: 'server_error' } },
    );
    assert.equal((await gw.settled(accountId)).balance_micros, 1_000_000);
  });
});

describe('call deadlines and abandoned idempotent calls', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway({ limits: { request_timeout_ms: 1_000 } });
  });
  after(() => gw.close());

  test('a stream that outruns the call deadline is stopped, ends with an error event and is released: the upstream was too slow', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'chat', chunk_delay_ms: 50, times: 1 });
    const { events } = await postForEvents(
      `${gw.url}/v1/chat/completions`,
      { model: 'sandbox-chat', messages: [{ role: 'user', content: '[[words:200]]' }], stream: true },
      { authorization: `Bearer ${key}` },
    );
    assert.equal(events.at(-1)!.data.error.message, 'upstream provider error');
    const words = events.filter((e) => e.data?.choices?.[0]?.delta?.content).length;
    assert.ok(words > 3 && words < 200, `${words} words before the deadline`);
    assert.equal((await gw.settled(accountId)).balance_micros, 1_000_000);
    const ledger = (await gw.admin('GET', `/admin/accounts/${accountId}/ledger`)).body.data;
    assert.deepEqual(
      ledger.map((row: any) => row.kind),
      ['release', 'hold', 'credit'],
    );
  });

  test('a client that leaves an Idempotency-Key call is billed once on real usage, and the retry replays the answer', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'chat', delay_ms: 700, times: 1 });
    const send = (signal?: AbortSignal) =>
      request(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        signal,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': 'leave-early' },
        body: JSON.stringify({ model: 'sandbox-chat', messages: [{ role: 'user', content: 'slow' }], max_tokens: 20 }),
      });
    await assert.rejects(send(AbortSignal.timeout(200)));
    const retry = await eventually(async () => {
      const res = await send();
      const body = (await res.body.json()) as any;
      return res.statusCode === 200 && { replayed: res.headers['idempotent-replayed'], body };
    });
    assert.equal(retry.replayed, 'true');
    const usage = (await gw.admin('GET', `/admin/accounts/${accountId}/usage`)).body.data;
    assert.equal(usage.length, 1);
    assert.deepEqual(usage[0].units, { input_token: retry.body.usage.prompt_tokens, output_token: retry.body.usage.completion_tokens });
  });
});
