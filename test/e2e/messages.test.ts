// POST /v1/messages end to end with the official @anthropic-ai/sdk: an OpenAI-style upstream
// (translated) and a messages-native one (passed through), plain, streamed and with tools.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { request } from 'undici';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { postForEvents } from '../helpers/sse.js';

const bill = (usage: { input_tokens: number; output_tokens: number }) => usage.input_tokens * 2 + usage.output_tokens * 8;
const MODELS = ['sandbox-chat', 'sandbox-claude'] as const;
const weatherTool = {
  name: 'get_weather',
  description: 'Current weather',
  input_schema: { type: 'object' as const, properties: { query: { type: 'string' } } },
};

describe('messages', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway();
  });
  after(() => gw.close());
  beforeEach(() => gw.sandboxControl('DELETE', '/__sandbox/faults'));

  const client = (key: string) => new Anthropic({ apiKey: key, baseURL: gw.url, maxRetries: 0 });

  test('a translated message, plain or streamed, has an id of its own in the messages format', async () => {
    const { key } = await gw.account({ creditMicros: 1_000_000 });
    const params = { model: 'sandbox-chat', max_tokens: 100, messages: [{ role: 'user' as const, content: 'name me' }] };
    const ids = [
      (await client(key).messages.create(params)).id,
      (await client(key).messages.create(params)).id,
      (await client(key).messages.stream(params).finalMessage()).id,
    ];
    for (const id of ids) assert.match(id, /^msg_[0-9a-f]{24}$/);
    assert.equal(new Set(ids).size, ids.length);
  });

  for (const model of MODELS) {
    test(`${model}: messages.create answers in the messages format and bills exactly the usage`, async () => {
      const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
      const message = await client(key).messages.create({
        model,
        max_tokens: 100,
        system: 'You are terse.',
        messages: [{ role: 'user', content: 'what is a toll road' }],
      });
      assert.equal(message.type, 'message');
      assert.equal(message.role, 'assistant');
      assert.equal(message.model, model);
      assert.deepEqual(message.content, [{ type: 'text', text: 'Sandbox says: what is a toll road' }]);
      assert.equal(message.stop_reason, 'end_turn');
      assert.equal(message.usage.output_tokens, 7);
      assert.equal((await gw.settled(accountId)).balance_micros, 1_000_000 - bill(message.usage));
    });

    test(`${model}: messages.stream().finalMessage() gives the same text and output as the plain call, each billed the usage it shows`, async () => {
      const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
      const params = { model, max_tokens: 100, messages: [{ role: 'user' as const, content: 'stream me a reply' }] };
      const plain = await client(key).messages.create(params);
      const streamed = await client(key).messages.stream(params).finalMessage();
      assert.deepEqual(streamed.content, plain.content);
      assert.equal(streamed.stop_reason, 'end_turn');
      assert.equal(streamed.usage.output_tokens, plain.usage.output_tokens);
      assert.equal((await gw.settled(accountId)).balance_micros, 1_000_000 - bill(plain.usage) - bill(streamed.usage));
    });

    test(`${model}: a tool-use round trip works and every turn is billed`, async () => {
      const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
      const first = await client(key).messages.create({
        model,
        max_tokens: 200,
        tools: [weatherTool],
        tool_choice: { type: 'auto' },
        messages: [{ role: 'user', content: 'weather in Paris [[tool:get_weather]]' }],
      });
      assert.equal(first.stop_reason, 'tool_use');
      const toolUse = first.content.find((block) => block.type === 'tool_use');
      assert.ok(toolUse && toolUse.type === 'tool_use');
      assert.equal(toolUse.name, 'get_weather');
      assert.deepEqual(toolUse.input, { query: 'weather in Paris' });

      const second = await client(key)
        .messages.stream({
          model,
          max_tokens: 200,
          tools: [weatherTool],
          messages: [
            { role: 'user', content: 'weather in Paris [[tool:get_weather]]' },
            { role: 'assistant', content: first.content },
            {
              role: 'user',
              content: [
                { type: 'tool_result', tool_use_id: toolUse.id, content: '15 degrees' },
                { type: 'text', text: 'summarise it' },
              ],
            },
          ],
        })
        .finalMessage();
      assert.equal(second.stop_reason, 'end_turn');
      assert.deepEqual(second.content, [{ type: 'text', text: 'Sandbox says: summarise it' }]);
      assert.equal((await gw.settled(accountId)).balance_micros, 1_000_000 - bill(first.usage) - bill(second.usage));
    });
  }

  test('the OpenAI-style and messages-native upstreams count the same conversation alike', async () => {
    const { key } = await gw.account();
    const params = { max_tokens: 50, system: 'be kind', messages: [{ role: 'user' as const, content: 'one two three' }] };
    const [viaChat, native] = await Promise.all(MODELS.map((model) => client(key).messages.create({ ...params, model })));
    assert.deepEqual(viaChat!.usage.input_tokens, native!.usage.input_tokens);
    assert.deepEqual(viaChat!.usage.output_tokens, native!.usage.output_tokens);
  });

  test('the translated upstream request carries system, tools, tool_choice, stop and the channel key', async () => {
    const { key } = await gw.account();
    await gw.sandboxControl('DELETE', '/__sandbox/requests');
    await client(key).messages.create({
      model: 'sandbox-chat',
      max_tokens: 30,
      system: [
        { type: 'text', text: 'rule one' },
        { type: 'text', text: 'rule two' },
      ],
      stop_sequences: ['END'],
      tools: [weatherTool],
      tool_choice: { type: 'any' },
      metadata: { user_id: 'u-1' },
      messages: [{ role: 'user', content: 'hello' }],
    });
    const [sent] = (await gw.sandboxControl('GET', '/__sandbox/requests')).data;
    assert.equal(sent.headers.authorization, 'Bearer sk-sandbox');
    assert.ok(!JSON.stringify(sent).includes(key));
    assert.deepEqual(
      {
        messages: sent.body.messages,
        stop: sent.body.stop,
        tool_choice: sent.body.tool_choice,
        tools: sent.body.tools,
        user: sent.body.user,
        max_tokens: sent.body.max_tokens,
      },
      {
        messages: [
          { role: 'system', content: 'rule one\n\nrule two' },
          { role: 'user', content: 'hello' },
        ],
        stop: ['END'],
        tool_choice: 'required',
        user: 'u-1',
        max_tokens: 30,
        tools: [{ type: 'function', function: { name: 'get_weather', description: 'Current weather', parameters: weatherTool.input_schema } }],
      },
    );
  });

  test('a messages-native upstream gets the channel credentials, not the caller key', async () => {
    const { key } = await gw.account();
    await gw.sandboxControl('DELETE', '/__sandbox/requests');
    await client(key).messages.create({ model: 'sandbox-claude', max_tokens: 30, messages: [{ role: 'user', content: 'hello' }] });
    const [sent] = (await gw.sandboxControl('GET', '/__sandbox/requests')).data;
    assert.equal(sent.headers['x-api-key'], 'sk-sandbox');
    assert.equal(sent.headers['anthropic-version'], '2023-06-01');
    assert.ok(!JSON.stringify(sent).includes(key));
  });

  test('a translated stream emits the messages events in order, text block then tool block', async () => {
    const { key } = await gw.account();
    const { status, contentType, events } = await postForEvents(
      `${gw.url}/v1/messages`,
      {
        model: 'sandbox-chat',
        max_tokens: 100,
        stream: true,
        tools: [weatherTool],
        messages: [{ role: 'user', content: 'rain [[tool:get_weather]]' }],
      },
      { 'x-api-key': key, 'anthropic-version': '2023-06-01' },
    );
    assert.equal(status, 200);
    assert.match(contentType, /^text\/event-stream/);
    const names = events.map((e) => e.event);
    assert.deepEqual(names.slice(0, 3), ['message_start', 'ping', 'content_block_start']);
    assert.deepEqual(names.slice(-3), ['content_block_stop', 'message_delta', 'message_stop']);
    assert.ok(
      events.every((e) => e.event === e.data.type),
      'each event name equals its data.type',
    );
    const start = events.find((e) => e.event === 'content_block_start')!.data;
    assert.deepEqual({ type: start.content_block.type, name: start.content_block.name }, { type: 'tool_use', name: 'get_weather' });
    const json = events
      .filter((e) => e.data.delta?.type === 'input_json_delta')
      .map((e) => e.data.delta.partial_json)
      .join('');
    assert.deepEqual(JSON.parse(json), { query: 'rain' });
    const delta = events.find((e) => e.event === 'message_delta')!.data;
    assert.equal(delta.delta.stop_reason, 'tool_use');
    assert.ok(delta.usage.output_tokens > 0);
  });

  test('an upstream failure mid-stream ends with an error event and is released in full', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'chat', drop_after_chunks: 6, times: 1 });
    const { status, events } = await postForEvents(
      `${gw.url}/v1/messages`,
      {
        model: 'sandbox-chat',
        max_tokens: 100,
        stream: true,
        messages: [{ role: 'user', content: '[[words:30]]' }],
      },
      { 'x-api-key': key, 'anthropic-version': '2023-06-01' },
    );
    assert.equal(status, 200);
    const last = events.at(-1)!;
    assert.deepEqual(last, { event: 'error', data: { type: 'error', error: { type: 'api_error', message: 'upstream provider error' } } });
    const texts = events.filter((e) => e.data.delta?.type === 'text_delta');
    assert.equal(texts.length, 5, 'the role chunk and five words arrived before the cut');
    assert.equal((await gw.settled(accountId)).balance_micros, 1_000_000);
    assert.deepEqual((await gw.admin('GET', `/admin/accounts/${accountId}/usage`)).body.data, []);
  });

  test('a translated stream the upstream ends without [DONE] ends with the error event and is released', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'chat', error_after_chunks: 4, times: 1 });
    const { events } = await postForEvents(
      `${gw.url}/v1/messages`,
      {
        model: 'sandbox-chat',
        max_tokens: 100,
        stream: true,
        messages: [{ role: 'user', content: '[[words:30]]' }],
      },
      { 'x-api-key': key, 'anthropic-version': '2023-06-01' },
    );
    assert.equal(events.at(-1)!.event, 'error');
    assert.ok(!events.some((e) => e.event === 'message_stop'));
    assert.equal((await gw.settled(accountId)).balance_micros, 1_000_000);
  });

  test('a native stream the upstream breaks ends with the messages error event and is released', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'messages', drop_after_chunks: 5, times: 1 });
    const { events } = await postForEvents(
      `${gw.url}/v1/messages`,
      {
        model: 'sandbox-claude',
        max_tokens: 100,
        stream: true,
        messages: [{ role: 'user', content: '[[words:30]]' }],
      },
      { 'x-api-key': key, 'anthropic-version': '2023-06-01' },
    );
    assert.deepEqual(events.at(-1), { event: 'error', data: { type: 'error', error: { type: 'api_error', message: 'upstream provider error' } } });
    assert.equal((await gw.settled(accountId)).balance_micros, 1_000_000);
  });

  test('an upstream refusal before the stream starts is a 502 and nothing is charged', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'messages', status: 529, times: 1 });
    await assert.rejects(
      client(key)
        .messages.stream({ model: 'sandbox-claude', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] })
        .finalMessage(),
      (error: any) => error.status === 502,
    );
    assert.equal((await gw.settled(accountId)).balance_micros, 1_000_000);
  });

  describe('refusals', () => {
    const post = async (body: object, headers: Record<string, string>) => {
      const res = await request(`${gw.url}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
      return { status: res.statusCode, body: await res.body.json() };
    };
    const valid = { model: 'sandbox-chat', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] };

    test('a missing version header is 400', async () => {
      const { key } = await gw.account();
      assert.deepEqual(await post(valid, { 'x-api-key': key }), {
        status: 400,
        body: {
          error: 'anthropic-version header is required: send anthropic-version: 2023-06-01 (or vendor-version: 2023-06-01)',
          type: 'invalid_request_error',
        },
      });
    });

    test('another version is 400', async () => {
      const { key } = await gw.account();
      assert.deepEqual(await post(valid, { 'x-api-key': key, 'vendor-version': '2024-01-01' }), {
        status: 400,
        body: {
          error: 'anthropic-version: 2024-01-01 is not supported; send anthropic-version: 2023-06-01 (or vendor-version: 2023-06-01)',
          type: 'invalid_request_error',
        },
      });
    });

    test('the spec header vendor-version is accepted', async () => {
      const { key } = await gw.account();
      assert.equal((await post(valid, { 'x-api-key': key, 'vendor-version': '2023-06-01' })).status, 200);
    });

    test('a missing model is 400 model field is required', async () => {
      const { key } = await gw.account();
      const { model: _, ...noModel } = valid;
      assert.deepEqual(await post(noModel, { 'x-api-key': key, 'anthropic-version': '2023-06-01' }), {
        status: 400,
        body: { error: 'model field is required', type: 'invalid_request_error' },
      });
    });

    test('a missing max_tokens is 400 naming it', async () => {
      const { key } = await gw.account();
      const { max_tokens: _, ...noMax } = valid;
      assert.deepEqual(await post(noMax, { 'x-api-key': key, 'anthropic-version': '2023-06-01' }), {
        status: 400,
        body: { error: 'max_tokens field is required', type: 'invalid_request_error' },
      });
    });

    test('a missing key is 401', async () => {
      assert.deepEqual(await post(valid, { 'anthropic-version': '2023-06-01' }), {
        status: 401,
        body: { error: 'invalid or missing API key', type: 'auth_error' },
      });
    });
  });
});
