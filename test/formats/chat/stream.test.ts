// ChatStreamEncoder's chunk stream as the official `openai` client reads it: served to
// `chat.completions.stream()` (the SDK's own SSE parser and accumulator) through a fetch that
// answers with the encoded text. `ChatCompletionStream.fromReadableStream` reads the SDK's NDJSON
// re-encoding, not SSE, so it cannot stand in for the wire.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ChatStreamEncoder, chatCompletionOf } from '../../../src/formats/chat/from-pivot.js';
import type { PivotEvent, PivotResponse } from '../../../src/pivot/types.js';
import { clientServing } from '../responses/sse-events.js';

const ids = { id: 'chatcmpl-1', model: 'public-chat', created: 1700000000 };

const encode = (events: PivotEvent[], includeUsage: boolean) => {
  const encoder = new ChatStreamEncoder(ids, includeUsage);
  return events.map((event) => encoder.push(event)).join('');
};

/** The data payloads of an SSE text, parsed (`[DONE]` kept as the string). */
const payloads = (sse: string) =>
  sse
    .split('\n\n')
    .filter((frame) => frame !== '')
    .map((frame) => {
      assert.match(frame, /^data: [^\n]+$/);
      const data = frame.slice('data: '.length);
      return data === '[DONE]' ? data : JSON.parse(data);
    });

/** The openai client's final completion of `sse`, less `message.parsed`, the client's own addition. */
async function finalOf(sse: string): Promise<unknown> {
  const final = await clientServing(sse)
    .chat.completions.stream({ model: 'public-chat', messages: [{ role: 'user', content: 'hi' }], stream_options: { include_usage: true } })
    .finalChatCompletion();
  const { choices, ...rest } = JSON.parse(JSON.stringify(final));
  return { ...rest, choices: choices.map(({ message: { parsed: _, ...message }, ...choice }: Record<string, any>) => ({ ...choice, message })) };
}

// Text, then two calls whose arguments arrive in pieces, as messages' input_json_delta gives them.
const answer: PivotResponse = {
  text: 'Let me check both.',
  toolCalls: [
    { id: 'toolu_01A', name: 'get_weather', arguments: '{"city": "Paris"}' },
    { id: 'toolu_01B', name: 'get_weather', arguments: '{"city": "Rome"}' },
  ],
  finish: 'tool_calls',
  usage: { input: 849, output: 47, cacheRead: 800 },
};
const events: PivotEvent[] = [
  { type: 'usage', usage: { input: 849, output: 1, cacheRead: 800 } },
  { type: 'text', text: 'Let me check' },
  { type: 'text', text: ' both.' },
  { type: 'tool_call', index: 0, id: 'toolu_01A', name: 'get_weather', arguments: '' },
  { type: 'tool_call', index: 0, arguments: '{"city": "Par' },
  { type: 'tool_call', index: 0, arguments: 'is"}' },
  { type: 'tool_call', index: 1, id: 'toolu_01B', name: 'get_weather', arguments: '{"city": "Rome"}' },
  { type: 'finish', finish: 'tool_calls' },
  { type: 'usage', usage: { input: 849, output: 47, cacheRead: 800 } },
  { type: 'done' },
];

test('the openai client’s final completion of a streamed answer is the whole answer’s completion', async () => {
  const final = await finalOf(encode(events, true));
  assert.deepEqual(final, chatCompletionOf(answer, ids));
});

test('a text-only answer read by the openai client has its text, stop finish and the last usage', async () => {
  const textEvents: PivotEvent[] = [
    { type: 'text', text: 'Hello' },
    { type: 'text', text: '! How can I help?' },
    { type: 'finish', finish: 'stop' },
    { type: 'usage', usage: { input: 12, output: 30 } },
    { type: 'done' },
  ];
  const final = await finalOf(encode(textEvents, true));
  const expected = chatCompletionOf({ text: 'Hello! How can I help?', toolCalls: [], finish: 'stop', usage: { input: 12, output: 30 } }, ids);
  assert.deepEqual(final, expected);
});

test('the first chunk names the assistant role and the stream ends with [DONE]', () => {
  const sent = payloads(encode(events, false));
  assert.deepEqual([sent[0].choices[0].delta, sent.at(-1)], [{ role: 'assistant', content: '' }, '[DONE]']);
});

test('usage goes out in one choiceless chunk before [DONE] when include_usage was asked', () => {
  const sent = payloads(encode(events, true));
  assert.deepEqual(sent.slice(-2), [
    {
      id: 'chatcmpl-1',
      object: 'chat.completion.chunk',
      created: 1700000000,
      model: 'public-chat',
      choices: [],
      usage: {
        prompt_tokens: 849,
        completion_tokens: 47,
        total_tokens: 896,
        prompt_tokens_details: { cached_tokens: 800 },
        completion_tokens_details: { reasoning_tokens: 0 },
      },
    },
    '[DONE]',
  ]);
});

test('no chunk carries usage when include_usage was not asked', () => {
  assert.ok(payloads(encode(events, false)).every((chunk) => chunk === '[DONE]' || !('usage' in chunk)));
});

test('reasoning streams as reasoning_content deltas, a bare signature sending nothing', () => {
  const sent = payloads(
    encode(
      [
        { type: 'reasoning', text: '925 ÷ 5' },
        { type: 'reasoning', text: '', signature: 'EvQB' },
        { type: 'text', text: '185' },
        { type: 'finish', finish: 'stop' },
        { type: 'done' },
      ],
      false,
    ),
  );
  assert.deepEqual(
    sent.slice(1, -1).map((chunk) => chunk.choices[0].delta),
    [{ reasoning_content: '925 ÷ 5' }, { content: '185' }, {}],
  );
});

test('fail writes one data line carrying error, and nothing follows it', () => {
  const encoder = new ChatStreamEncoder(ids, true);
  encoder.push({ type: 'text', text: 'Hel' });
  const failure = encoder.fail('upstream connection reset');
  const after = [{ type: 'text', text: 'lo' }, { type: 'finish', finish: 'stop' }, { type: 'done' }] as const;
  assert.deepEqual(
    [payloads(failure), after.map((event) => encoder.push(event))],
    [[{ error: { message: 'upstream connection reset', type: 'server_error', param: null, code: null } }], ['', '', '']],
  );
});

test('the openai client raises the failure written by fail', async () => {
  const encoder = new ChatStreamEncoder(ids, true);
  const sse = encoder.push({ type: 'text', text: 'Hel' }) + encoder.fail('upstream connection reset');
  await assert.rejects(finalOf(sse), /upstream connection reset/);
});

test('nothing is written after done', () => {
  const encoder = new ChatStreamEncoder(ids, true);
  encoder.push({ type: 'done' });
  assert.deepEqual([encoder.push({ type: 'text', text: 'late' }), encoder.push({ type: 'done' })], ['', '']);
});
