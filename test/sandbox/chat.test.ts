import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import OpenAI from 'openai';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.js';
import { postChat, postJson, streamChat, streamedText } from './sandbox-client.js';

let sandbox: Sandbox;
before(async () => {
  sandbox = await startSandbox({ port: 0 });
});
after(() => sandbox.close());

const HELLO = {
  model: 'sandbox-chat',
  messages: [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'hello there' },
  ],
};
const TOOLS = [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }];

test('a plain call answers a whole chat.completion echoing the last user message', async () => {
  const { status, body } = await postChat(sandbox.url, HELLO);
  assert.equal(status, 200);
  assert.match(body.id, /^chatcmpl-[0-9a-f]{24}$/);
  assert.deepEqual(body, {
    id: body.id,
    object: 'chat.completion',
    created: 1_735_689_600,
    model: 'sandbox-chat',
    choices: [{ index: 0, message: { role: 'assistant', content: 'Sandbox says: hello there', refusal: null }, logprobs: null, finish_reason: 'stop' }],
    usage: { prompt_tokens: 3 + 3, completion_tokens: 4, total_tokens: 10 },
  });
});

test('the same request always gets the same answer', async () => {
  const first = await postChat(sandbox.url, HELLO);
  const second = await postChat(sandbox.url, HELLO);
  assert.deepEqual(second.body, first.body);
});

test('a streamed call gives the same text, finish reason and usage as a plain one', async () => {
  const body = { ...HELLO, messages: [{ role: 'user', content: 'count [[words:5]] please' }] };
  const plain = await postChat(sandbox.url, body);
  const streamed = await streamChat(sandbox.url, { ...body, stream_options: { include_usage: true } });
  assert.equal(streamed.headers.get('content-type'), 'text/event-stream');
  assert.equal(streamedText(streamed.events), plain.body.choices[0].message.content);
  assert.equal(plain.body.choices[0].message.content, 'w1 w2 w3 w4 w5');
  const finish = streamed.events.find((e) => e !== '[DONE]' && e.choices[0]?.finish_reason);
  assert.equal(finish.choices[0].finish_reason, plain.body.choices[0].finish_reason);
  assert.deepEqual(streamed.events.at(-2).usage, plain.body.usage);
});

test('a stream opens with the assistant role, sends one word per chunk, then the finish chunk and [DONE]', async () => {
  const { events } = await streamChat(sandbox.url, HELLO);
  const deltas = events.slice(0, -1).map((e) => [e.choices[0].delta, e.choices[0].finish_reason]);
  assert.deepEqual(deltas, [
    [{ role: 'assistant', content: '' }, null],
    [{ content: 'Sandbox' }, null],
    [{ content: ' says:' }, null],
    [{ content: ' hello' }, null],
    [{ content: ' there' }, null],
    [{}, 'stop'],
  ]);
  assert.equal(events.at(-1), '[DONE]');
});

test('the usage chunk is sent only when stream_options.include_usage is true', async () => {
  const without = await streamChat(sandbox.url, HELLO);
  assert.ok(without.events.every((e) => e === '[DONE]' || !('usage' in e)));
  const withUsage = await streamChat(sandbox.url, { ...HELLO, stream_options: { include_usage: true } });
  const usageChunks = withUsage.events.filter((e) => e !== '[DONE]' && e.usage !== null);
  assert.deepEqual(
    usageChunks.map((e) => [e.choices, e.usage]),
    [[[], { prompt_tokens: 6, completion_tokens: 4, total_tokens: 10 }]],
  );
  assert.equal(withUsage.events.indexOf(usageChunks[0]), withUsage.events.length - 2);
});

test('a reply longer than max_tokens is cut to that many words with finish_reason length', async () => {
  const body = { model: 'sandbox-chat', messages: [{ role: 'user', content: '[[words:10]]' }], max_tokens: 4 };
  const plain = await postChat(sandbox.url, body);
  assert.deepEqual(
    [plain.body.choices[0].message.content, plain.body.choices[0].finish_reason, plain.body.usage],
    ['w1 w2 w3 w4', 'length', { prompt_tokens: 2, completion_tokens: 4, total_tokens: 6 }],
  );
  const streamed = await streamChat(sandbox.url, { ...body, stream_options: { include_usage: true } });
  assert.equal(streamedText(streamed.events), 'w1 w2 w3 w4');
  assert.deepEqual(streamed.events.at(-2).usage, plain.body.usage);
});

test('max_completion_tokens limits the reply like max_tokens', async () => {
  const body = { model: 'sandbox-chat', messages: [{ role: 'user', content: '[[words:10]]' }], max_completion_tokens: 2 };
  const { body: answer } = await postChat(sandbox.url, body);
  assert.deepEqual([answer.choices[0].message.content, answer.choices[0].finish_reason], ['w1 w2', 'length']);
});

test('a stop sequence equal to a word of the reply ends it before that word, with finish_reason stop', async () => {
  const body = { model: 'sandbox-chat', messages: [{ role: 'user', content: '[[words:5]]' }], stop: ['w3', 'w5'] };
  const plain = await postChat(sandbox.url, body);
  assert.deepEqual(
    [plain.body.choices[0].message.content, plain.body.choices[0].finish_reason, plain.body.usage],
    ['w1 w2', 'stop', { prompt_tokens: 2, completion_tokens: 2, total_tokens: 4 }],
  );
  const streamed = await streamChat(sandbox.url, { ...body, stop: 'w3', stream_options: { include_usage: true } });
  assert.deepEqual([streamedText(streamed.events), streamed.events.at(-2).usage], ['w1 w2', plain.body.usage]);
  const refused = await postChat(sandbox.url, { ...body, stop: [3] });
  assert.deepEqual([refused.status, refused.body.error.message], [400, 'stop: expected a string or an array of strings']);
});

test('an offered tool named in the prompt is called with the other words as query', async () => {
  const body = { model: 'sandbox-chat', messages: [{ role: 'user', content: 'weather in Paris [[tool:lookup]]' }], tools: TOOLS };
  const { body: answer } = await postChat(sandbox.url, body);
  assert.deepEqual(answer.choices[0], {
    index: 0,
    message: {
      role: 'assistant',
      content: null,
      refusal: null,
      tool_calls: [{ id: answer.id.replace('chatcmpl-', 'call_'), type: 'function', function: { name: 'lookup', arguments: '{"query":"weather in Paris"}' } }],
    },
    logprobs: null,
    finish_reason: 'tool_calls',
  });
  assert.deepEqual(answer.usage, { prompt_tokens: 5, completion_tokens: 4, total_tokens: 9 });
});

test('a streamed tool call sends id and name first, then argument pieces that join to the whole', async () => {
  const body = { model: 'sandbox-chat', messages: [{ role: 'user', content: 'weather in Paris [[tool:lookup]]' }], tools: TOOLS };
  const { events } = await streamChat(sandbox.url, body);
  const calls = events.slice(0, -1).flatMap((e) => e.choices[0].delta.tool_calls ?? []);
  assert.deepEqual(calls[0], { index: 0, id: calls[0].id, type: 'function', function: { name: 'lookup', arguments: '' } });
  assert.match(calls[0].id, /^call_[0-9a-f]{24}$/);
  assert.equal(calls.map((c: any) => c.function.arguments).join(''), '{"query":"weather in Paris"}');
  assert.ok(calls.slice(1).every((c: any) => Object.keys(c).join() === 'index,function'));
  assert.equal(events.at(-2).choices[0].finish_reason, 'tool_calls');
});

test('a long stream arrives whole through the socket buffer filling and draining', async () => {
  const { events } = await streamChat(sandbox.url, { model: 'sandbox-chat', messages: [{ role: 'user', content: '[[words:20000]]' }] });
  const words = streamedText(events).split(' ');
  assert.deepEqual([words.length, words[0], words.at(-1), events.at(-1)], [20000, 'w1', 'w20000', '[DONE]']);
});

test('a call without a bearer token is refused with 401 and an OpenAI error', async () => {
  const refused: Record<string, string>[] = [{ 'content-type': 'application/json' }, { authorization: 'Bearer ', 'content-type': 'application/json' }];
  for (const headers of refused) {
    const { status, body } = await postChat(sandbox.url, HELLO, headers);
    assert.equal(status, 401);
    assert.deepEqual(body, {
      error: { message: 'Missing bearer token: send Authorization: Bearer <key>', type: 'invalid_request_error', param: null, code: 'invalid_api_key' },
    });
  }
});

test('a body without model or messages is refused with 400 naming the field', async () => {
  const noModel = await postChat(sandbox.url, { messages: HELLO.messages });
  const noMessages = await postChat(sandbox.url, { model: 'sandbox-chat' });
  assert.deepEqual(
    [noModel.status, noModel.body.error.message, noMessages.status, noMessages.body.error.message],
    [400, 'model: required, a non-empty string', 400, 'messages: required, a non-empty array'],
  );
  assert.deepEqual(Object.keys(noModel.body.error), ['message', 'type', 'param', 'code']);
});

test('a body that is not JSON is refused with 400', async () => {
  const res = await fetch(`${sandbox.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
    body: '{"model":',
  });
  assert.equal(res.status, 400);
  assert.match(((await res.json()) as any).error.message, /^invalid JSON body/);
});

test('an unknown path answers 404', async () => {
  const res = await postJson(`${sandbox.url}/v1/nothing-here`, {});
  assert.deepEqual([res.status, ((await res.json()) as any).error.code], [404, 'not_found']);
});

test('the official openai client reads the stream, its usage and the errors', async () => {
  const client = new OpenAI({ apiKey: 'sk-test', baseURL: `${sandbox.url}/v1`, maxRetries: 0 });
  const stream = await client.chat.completions.create({ ...HELLO, stream: true, stream_options: { include_usage: true } } as any);
  let text = '';
  let usage: unknown;
  for await (const chunk of stream as any) {
    text += chunk.choices[0]?.delta.content ?? '';
    usage = chunk.usage ?? usage;
  }
  assert.deepEqual([text, usage], ['Sandbox says: hello there', { prompt_tokens: 6, completion_tokens: 4, total_tokens: 10 }]);
  await assert.rejects(client.chat.completions.create({ model: 'sandbox-chat' } as any), { status: 400 });
});
