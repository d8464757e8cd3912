import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GoogleGenAI } from '@google/genai';
import { GeminiJsonArrayEncoder, GeminiSseEncoder } from '../../../src/formats/gemini/stream.js';
import type { PivotEvent, PivotStreamEncoder } from '../../../src/pivot/types.js';

const ids = { model: 'gemini-2.5-flash', responseId: 'r1' };
const tail = '"modelVersion":"gemini-2.5-flash","responseId":"r1"}';

const encode = (encoder: PivotStreamEncoder, events: PivotEvent[]) => events.map((event) => encoder.push(event)).join('');

const story: PivotEvent[] = [
  { type: 'text', text: 'Zipper the' },
  { type: 'text', text: ' backpack hummed.' },
  { type: 'usage', usage: { input: 10, output: 5 } },
  { type: 'finish', finish: 'stop' },
  { type: 'done' },
];

test('a streamed text answer is one SSE chunk per delta, the last with finishReason and usageMetadata', () => {
  assert.equal(
    encode(new GeminiSseEncoder(ids), story),
    `data: {"candidates":[{"content":{"role":"model","parts":[{"text":"Zipper the"}]},"index":0}],${tail}\r\n\r\n` +
      `data: {"candidates":[{"content":{"role":"model","parts":[{"text":" backpack hummed."}]},"index":0}],${tail}\r\n\r\n` +
      `data: {"candidates":[{"content":{"role":"model","parts":[{"text":""}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":5,"totalTokenCount":15},${tail}\r\n\r\n`,
  );
});

test('without alt=sse the same chunks are one JSON array, written element by element', () => {
  const sse = encode(new GeminiSseEncoder(ids), story);
  const array = new GeminiJsonArrayEncoder(ids);
  const pieces = story.map((event) => array.push(event));
  const chunks = sse
    .split('\r\n\r\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line.slice('data: '.length)));
  assert.deepEqual(
    [pieces[0]?.startsWith('[{'), pieces[1]?.startsWith(',\r\n{'), pieces.at(-1)?.endsWith('}]'), JSON.parse(pieces.join(''))],
    [true, true, true, chunks],
  );
});

test('a function call is sent whole, in one chunk, once its arguments are complete', () => {
  const sse = encode(new GeminiSseEncoder(ids), [
    { type: 'tool_call', index: 0, id: 'call_a', name: 'set_light_values', arguments: '{"brightness":' },
    { type: 'tool_call', index: 0, arguments: '25}' },
    { type: 'finish', finish: 'tool_calls' },
    { type: 'done' },
  ]);
  assert.equal(
    sse.split('\r\n\r\n')[0],
    `data: {"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"id":"call_a","name":"set_light_values","args":{"brightness":25}}}]},"index":0}],${tail}`,
  );
});

test('a failed SSE stream ends with Gemini’s error object and nothing after it', () => {
  const encoder = new GeminiSseEncoder(ids);
  const out = encode(encoder, [{ type: 'text', text: 'Hi' }]);
  const failed = encoder.fail('upstream broke');
  assert.deepEqual([failed, encoder.push({ type: 'done' })], ['data: {"error":{"code":500,"message":"upstream broke","status":"INTERNAL"}}\r\n\r\n', '']);
  assert.ok(out.startsWith('data: {"candidates"'));
});

test('a failed JSON array ends with the error object as its last element, and is closed', () => {
  const encoder = new GeminiJsonArrayEncoder(ids);
  const body = encode(encoder, [{ type: 'text', text: 'Hi' }]) + encoder.fail('upstream broke');
  assert.deepEqual(JSON.parse(body).at(-1), { error: { code: 500, message: 'upstream broke', status: 'INTERNAL' } });
});

test('a JSON array that fails before any chunk is still one closed array', () => {
  const encoder = new GeminiJsonArrayEncoder(ids);
  assert.deepEqual(JSON.parse(encoder.fail('upstream broke')), [{ error: { code: 500, message: 'upstream broke', status: 'INTERNAL' } }]);
});

/** `@google/genai` reading `body` as a streamGenerateContent answer. */
async function readWithSdk(body: string) {
  const original = globalThis.fetch;
  globalThis.fetch = async () => new Response(body, { headers: { 'content-type': 'text/event-stream' } });
  try {
    const ai = new GoogleGenAI({ apiKey: 'test', httpOptions: { baseUrl: 'http://gateway.test' } });
    const chunks = [];
    for await (const chunk of await ai.models.generateContentStream({ model: 'public-model', contents: 'hi' })) chunks.push(chunk);
    return chunks;
  } finally {
    globalThis.fetch = original;
  }
}

test('the @google/genai client reads the stream: text, the function call and the usage', async () => {
  const chunks = await readWithSdk(
    encode(new GeminiSseEncoder(ids), [
      { type: 'reasoning', text: 'Dim, warm.' },
      { type: 'text', text: 'Setting ' },
      { type: 'text', text: 'the lights.' },
      { type: 'tool_call', index: 0, id: 'call_a', name: 'set_light_values', arguments: '{"brightness":25}' },
      { type: 'finish', finish: 'tool_calls' },
      { type: 'usage', usage: { input: 10, output: 20, reasoning: 4 } },
      { type: 'done' },
    ]),
  );
  const text = chunks.map((chunk) => chunk.text ?? '').join('');
  const calls = chunks.flatMap((chunk) => chunk.functionCalls ?? []);
  const last = chunks.at(-1);
  assert.deepEqual(
    [text, calls, last?.candidates?.[0]?.finishReason, last?.usageMetadata],
    [
      'Setting the lights.',
      [{ id: 'call_a', name: 'set_light_values', args: { brightness: 25 } }],
      'STOP',
      { promptTokenCount: 10, candidatesTokenCount: 16, totalTokenCount: 30, thoughtsTokenCount: 4 },
    ],
  );
});

test('the @google/genai client raises a failed stream as an error carrying the message', async () => {
  const encoder = new GeminiSseEncoder(ids);
  const body = encode(encoder, [{ type: 'text', text: 'Hi' }]) + encoder.fail('upstream broke');
  await assert.rejects(readWithSdk(body), /upstream broke/);
});
