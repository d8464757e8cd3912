// Gemini's streamGenerateContent (`?alt=sse`) read into pivot events by GeminiSseDecoder.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import type { PivotEvent } from '../../../src/pivot/types.js';
import { GeminiSseDecoder } from '../../../src/upstreams/gemini/stream.js';

/** Gemini separates its events with CRLF pairs. */
const sseOf = (chunks: unknown[]) => chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\r\n\r\n`).join('');

function decodeWhole(text: string): PivotEvent[] {
  const decoder = new GeminiSseDecoder();
  return [...decoder.push(Buffer.from(text)), ...decoder.end()];
}

function decodeByteByByte(text: string): PivotEvent[] {
  const decoder = new GeminiSseDecoder();
  const bytes = Buffer.from(text);
  const events: PivotEvent[] = [];
  for (let i = 0; i < bytes.length; i++) events.push(...decoder.push(bytes.subarray(i, i + 1)));
  return [...events, ...decoder.end()];
}

const fixture = async (name: string) => JSON.parse(await readFile(new URL(`./fixtures/${name}.json`, import.meta.url), 'utf8'));

const chunk = (parts: unknown[], extra: Record<string, unknown> = {}) => ({
  candidates: [{ content: { role: 'model', parts }, index: 0, ...extra }],
});

test('a streamed answer is read chunk by chunk: text, the running usage, one finish and done', async () => {
  const { chunks, expected } = await fixture('stream-text');
  assert.deepEqual(decodeWhole(sseOf(chunks)), expected);
});

test('fed byte by byte the decoder gives the same events as fed in one piece', async () => {
  const { chunks } = await fixture('stream-text');
  const text = `${sseOf(chunks)}data: ${JSON.stringify(chunk([{ text: 'é ünïcode ✓' }]))}\r\n\r\n`;
  assert.deepEqual(decodeByteByByte(text), decodeWhole(text));
});

test('a body that ends without a finish reason was cut short: no done', () => {
  assert.deepEqual(decodeWhole(sseOf([chunk([{ text: 'Half an' }])])), [{ type: 'text', text: 'Half an' }]);
});

test('an error chunk in the stream gives an error event with its message, and no done', () => {
  const text = sseOf([chunk([{ text: 'Hi' }]), { error: { code: 500, message: 'Internal error encountered.', status: 'INTERNAL' } }]);
  assert.deepEqual(decodeWhole(text), [
    { type: 'text', text: 'Hi' },
    { type: 'error', message: 'Internal error encountered.' },
  ]);
});

test('function calls in a stream are numbered across chunks and make the finish tool_calls', () => {
  const text = sseOf([
    chunk([{ functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'sig' }]),
    chunk([{ functionCall: { id: 'fc-9', name: 'get_time', args: {} } }], { finishReason: 'STOP' }),
  ]);
  assert.deepEqual(decodeWhole(text), [
    { type: 'reasoning', text: '', signature: 'sig' },
    { type: 'tool_call', index: 0, id: 'call_0', name: 'get_weather', arguments: '{"city":"Paris"}' },
    { type: 'tool_call', index: 1, id: 'fc-9', name: 'get_time', arguments: '{}' },
    { type: 'finish', finish: 'tool_calls' },
    { type: 'done' },
  ]);
});

test('a later chunk repeating the finish reason adds only its usage', () => {
  const text = sseOf([
    chunk([{ text: 'Hello' }], { finishReason: 'STOP' }),
    { ...chunk([{ text: '' }], { finishReason: 'STOP' }), usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 1 } },
  ]);
  assert.deepEqual(decodeWhole(text), [
    { type: 'text', text: 'Hello' },
    { type: 'finish', finish: 'stop' },
    { type: 'usage', usage: { input: 3, output: 1 } },
    { type: 'done' },
  ]);
});

test('a prompt blocked in a stream is a refusal, and the stream is whole', () => {
  const text = sseOf([{ promptFeedback: { blockReason: 'PROHIBITED_CONTENT' }, usageMetadata: { promptTokenCount: 6, totalTokenCount: 6 } }]);
  assert.deepEqual(decodeWhole(text), [{ type: 'finish', finish: 'refusal' }, { type: 'usage', usage: { input: 6, output: 0 } }, { type: 'done' }]);
});

test('a malformed chunk is skipped and the stream read on', () => {
  const text = `data: {"candidates":[{"content"\r\n\r\n${sseOf([chunk([{ text: 'ok' }], { finishReason: 'MAX_TOKENS' })])}`;
  assert.deepEqual(decodeWhole(text), [{ type: 'text', text: 'ok' }, { type: 'finish', finish: 'length' }, { type: 'done' }]);
});
