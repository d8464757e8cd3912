import assert from 'node:assert/strict';
import { after, before, beforeEach, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.js';
import { ANTHROPIC, addFault, clearSandbox, parseNamedSse, postChat, postJson, postTo, readUntilCut, streamNamed } from './sandbox-client.js';

let sandbox: Sandbox;
before(async () => {
  sandbox = await startSandbox({ port: 0 });
});
after(() => sandbox.close());
beforeEach(() => clearSandbox(sandbox.url));

const url = () => `${sandbox.url}/v1/messages`;
const post = (body: unknown, headers: Record<string, string> = ANTHROPIC) => postTo(url(), body, headers);
const stream = (body: object) => streamNamed(url(), body, ANTHROPIC);
const client = () => new Anthropic({ apiKey: 'sk-ant-test', baseURL: sandbox.url, maxRetries: 0 });

const HELLO = { model: 'sandbox-claude', max_tokens: 100, system: 'Be brief.', messages: [{ role: 'user', content: 'hello there' }] };
const TOOLS = [{ name: 'lookup', input_schema: { type: 'object' } }];
const ASK_TOOL = { model: 'sandbox-claude', max_tokens: 100, messages: [{ role: 'user', content: 'weather in Paris [[tool:lookup]]' }], tools: TOOLS };
const usage = (input: number, output: number) => ({ input_tokens: input, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: output });
/** What a client keeps of a Message: the SDK's rebuilt one adds client-side fields (`parsed_output`). */
const outcome = ({ content, stop_reason, stop_sequence, usage }: any) => ({ content, stop_reason, stop_sequence, usage });
/** The text a client rebuilds from text_delta events. */
const streamedText = (events: any[]) => events.map((e) => (e.delta?.type === 'text_delta' ? e.delta.text : '')).join('');

test('a plain call answers a whole Message echoing the last user message, counted like chat', async () => {
  const { status, headers, body } = await post(HELLO);
  assert.equal(status, 200);
  assert.match(body.id, /^msg_[0-9a-f]{24}$/);
  assert.equal(headers.get('request-id'), body.id.replace('msg_', 'req_'));
  assert.deepEqual(body, {
    id: body.id,
    type: 'message',
    role: 'assistant',
    model: 'sandbox-claude',
    content: [{ type: 'text', text: 'Sandbox says: hello there' }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    // the system prompt is one message: (1 + 2) + (1 + 2), as chat counts a system message
    usage: usage(6, 4),
  });
});

test('a stream sends message_start, the block with one word per delta, message_delta and message_stop', async () => {
  const { status, headers, events } = await stream(HELLO);
  assert.deepEqual([status, headers.get('content-type')], [200, 'text/event-stream']);
  const id = events[0].message.id;
  assert.deepEqual(events, [
    {
      type: 'message_start',
      message: { id, type: 'message', role: 'assistant', model: 'sandbox-claude', content: [], stop_reason: null, stop_sequence: null, usage: usage(6, 1) },
    },
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    { type: 'ping' },
    ...['Sandbox', ' says:', ' hello', ' there'].map((text) => ({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } })),
    { type: 'content_block_stop', index: 0 },
    { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 4 } },
    { type: 'message_stop' },
  ]);
});

test('the official SDK rebuilds from the stream the same content, stop reason and usage as a plain call', async () => {
  const { body: plain } = await post(HELLO);
  const streamed = await client()
    .messages.stream(HELLO as any)
    .finalMessage();
  assert.deepEqual(outcome(streamed), outcome(plain));
});

test('a conversation with a system block, a tool round trip and a later question costs what chat charges for it', async () => {
  const anthropic = {
    model: 'sandbox-claude',
    max_tokens: 100,
    system: [{ type: 'text', text: 'Be brief.' }],
    messages: [
      { role: 'user', content: 'weather in Paris' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { query: 'weather in Paris' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '15 degrees' }] },
      { role: 'user', content: [{ type: 'text', text: 'thanks [[words:3]]' }] },
    ],
  };
  const chat = {
    model: 'sandbox-chat',
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'weather in Paris' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'lookup', arguments: '{"query":"weather in Paris"}' } }],
      },
      { role: 'tool', tool_call_id: 'toolu_1', content: '15 degrees' },
      { role: 'user', content: 'thanks [[words:3]]' },
    ],
  };
  const [plain, streamed, reference] = await Promise.all([post(anthropic), stream(anthropic), postChat(sandbox.url, chat)]);
  assert.deepEqual(reference.body.usage, { prompt_tokens: 3 + 4 + 4 + 3 + 3, completion_tokens: 3, total_tokens: 20 });
  assert.deepEqual([plain.body.content, plain.body.usage], [[{ type: 'text', text: 'w1 w2 w3' }], usage(17, 3)]);
  assert.deepEqual(
    [streamedText(streamed.events), streamed.events[0].message.usage.input_tokens, streamed.events.at(-2).usage],
    ['w1 w2 w3', 17, { output_tokens: 3 }],
  );
});

test('a turn of tool results alone is not the question: the user turn before it is answered, as in chat', async () => {
  const body = {
    ...HELLO,
    messages: [
      { role: 'user', content: 'hello there' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'lookup', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'a b' }] }] },
    ],
  };
  const { body: answer } = await post(body);
  assert.deepEqual([answer.content, answer.usage], [[{ type: 'text', text: 'Sandbox says: hello there' }], usage(3 + 3 + 2 + 3, 4)]);
});

test('a reply longer than max_tokens is cut to that many words with stop_reason max_tokens', async () => {
  const body = { model: 'sandbox-claude', max_tokens: 4, messages: [{ role: 'user', content: '[[words:10]]' }] };
  const plain = await post(body);
  assert.deepEqual([plain.body.content, plain.body.stop_reason, plain.body.usage], [[{ type: 'text', text: 'w1 w2 w3 w4' }], 'max_tokens', usage(2, 4)]);
  const streamed = await stream(body);
  assert.deepEqual(
    [streamedText(streamed.events), streamed.events.at(-2)],
    ['w1 w2 w3 w4', { type: 'message_delta', delta: { stop_reason: 'max_tokens', stop_sequence: null }, usage: { output_tokens: 4 } }],
  );
});

test('a stop sequence equal to a word of the reply ends it before that word and is reported, streamed or not', async () => {
  const body = { model: 'sandbox-claude', max_tokens: 100, messages: [{ role: 'user', content: '[[words:5]]' }], stop_sequences: ['w4', 'w3'] };
  const plain = await post(body);
  assert.deepEqual(
    [plain.body.content, plain.body.stop_reason, plain.body.stop_sequence, plain.body.usage],
    [[{ type: 'text', text: 'w1 w2' }], 'stop_sequence', 'w3', usage(2, 2)],
  );
  const streamed = await client()
    .messages.stream(body as any)
    .finalMessage();
  assert.deepEqual(outcome(streamed), outcome(plain.body));
  const chat = await postChat(sandbox.url, { model: 'sandbox-chat', messages: body.messages, stop: body.stop_sequences });
  assert.deepEqual([chat.body.choices[0].message.content, chat.body.usage.completion_tokens], ['w1 w2', 2]);
});

test('an offered tool named in the prompt is called with a tool_use block, costing what chat charges', async () => {
  const { body } = await post(ASK_TOOL);
  assert.deepEqual(
    [body.content, body.stop_reason, body.usage],
    [[{ type: 'tool_use', id: body.id.replace('msg_', 'toolu_'), name: 'lookup', input: { query: 'weather in Paris' } }], 'tool_use', usage(5, 4)],
  );
  const chatTools = [{ type: 'function', function: { name: 'lookup' } }];
  const chat = await postChat(sandbox.url, { model: 'sandbox-chat', messages: ASK_TOOL.messages, tools: chatTools });
  assert.deepEqual([chat.body.usage.prompt_tokens, chat.body.usage.completion_tokens], [5, 4]);
});

test('a streamed tool call opens the block with empty input, then its partial_json pieces join to the input JSON', async () => {
  const { events } = await stream(ASK_TOOL);
  const start = events.find((e) => e.type === 'content_block_start');
  assert.deepEqual(start.content_block, { type: 'tool_use', id: events[0].message.id.replace('msg_', 'toolu_'), name: 'lookup', input: {} });
  const pieces = events.filter((e) => e.type === 'content_block_delta').map((e) => e.delta);
  assert.ok(pieces.every((delta) => delta.type === 'input_json_delta'));
  assert.equal(pieces[0].partial_json, '');
  assert.equal(pieces.map((delta) => delta.partial_json).join(''), '{"query":"weather in Paris"}');
  assert.deepEqual(events.at(-2), { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 4 } });
  const { body: plain } = await post(ASK_TOOL);
  const rebuilt = await client()
    .messages.stream(ASK_TOOL as any)
    .finalMessage();
  assert.deepEqual(
    [rebuilt.content[0], rebuilt.stop_reason, rebuilt.usage],
    [{ ...plain.content[0], id: rebuilt.id.replace('msg_', 'toolu_') }, 'tool_use', plain.usage],
  );
});

test('a call without x-api-key is refused with 401, one without anthropic-version with 400, in Anthropic error shape', async () => {
  const { 'x-api-key': _key, ...noKey } = ANTHROPIC;
  const { 'anthropic-version': _version, ...noVersion } = ANTHROPIC;
  const answers = await Promise.all([post(HELLO, noKey), post(HELLO, { ...ANTHROPIC, 'x-api-key': ' ' }), post(HELLO, noVersion)]);
  assert.deepEqual(
    answers.map((a) => [a.status, a.body]),
    [
      [401, { type: 'error', error: { type: 'authentication_error', message: 'x-api-key header is required' } }],
      [401, { type: 'error', error: { type: 'authentication_error', message: 'x-api-key header is required' } }],
      [400, { type: 'error', error: { type: 'invalid_request_error', message: 'anthropic-version: header is required' } }],
    ],
  );
});

test('a body without model, max_tokens or messages is refused with 400 naming the field', async () => {
  const { model: _m, ...noModel } = HELLO;
  const { max_tokens: _t, ...noMaxTokens } = HELLO;
  const { messages: _s, ...noMessages } = HELLO;
  const systemRole = { ...HELLO, messages: [{ role: 'system', content: 'x' }] };
  const answers = await Promise.all([noModel, noMaxTokens, noMessages, systemRole].map((body) => post(body)));
  assert.deepEqual(
    answers.map((a) => [a.status, a.body.type, a.body.error.type, a.body.error.message]),
    [
      [400, 'error', 'invalid_request_error', 'model: required, a non-empty string'],
      [400, 'error', 'invalid_request_error', 'max_tokens: required, a positive integer'],
      [400, 'error', 'invalid_request_error', 'messages: required, a non-empty array'],
      [400, 'error', 'invalid_request_error', 'messages[0].role: expected "user" or "assistant"'],
    ],
  );
});

test('a body that is not JSON is refused with 400 in Anthropic error shape', async () => {
  const res = await fetch(url(), { method: 'POST', headers: ANTHROPIC, body: '{"model":' });
  const body = (await res.json()) as any;
  assert.deepEqual([res.status, body.type, body.error.type], [400, 'error', 'invalid_request_error']);
});

test('a status fault on the messages kind answers in Anthropic error shape, which the SDK reads', async () => {
  await addFault(sandbox.url, { kind: 'messages', status: 529, times: 1 });
  await addFault(sandbox.url, { kind: 'messages', status: 429, times: 1 });
  const overloaded = await post(HELLO);
  assert.deepEqual([overloaded.status, overloaded.body], [529, { type: 'error', error: { type: 'overloaded_error', message: 'sandbox fault: status 529' } }]);
  await assert.rejects(client().messages.create(HELLO as any), (error: any) => {
    assert.deepEqual([error.status, error.error], [429, { type: 'error', error: { type: 'rate_limit_error', message: 'sandbox fault: status 429' } }]);
    return true;
  });
  assert.equal((await postChat(sandbox.url, { model: 'sandbox-chat', messages: HELLO.messages })).status, 200);
});

test('drop_after_chunks sends that many events of a stream, then cuts the connection', async () => {
  await addFault(sandbox.url, { kind: 'messages', drop_after_chunks: 3 });
  const res = await postJson(url(), { ...HELLO, stream: true }, ANTHROPIC);
  const { text, cut } = await readUntilCut(res);
  assert.equal(cut, true);
  assert.deepEqual(
    parseNamedSse(text).map((e) => e.type),
    ['message_start', 'content_block_start', 'ping'],
  );
  await assert.rejects(
    client()
      .messages.stream(HELLO as any)
      .finalMessage(),
  );
});
