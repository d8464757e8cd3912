// Round trip: a pivot answer streamed by ChatStreamEncoder and read back by the chat upstream's
// ChatStreamDecoder (the two ends of a chat stream) gives the same text, tool calls and usage,
// whatever the pieces its text and arguments come in and wherever the bytes are cut.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { ChatStreamEncoder } from '../../../src/formats/chat/from-pivot.js';
import type { PivotEvent, PivotResponse, PivotToolCall, PivotUsage } from '../../../src/pivot/types.js';
import { ChatStreamDecoder } from '../../../src/upstreams/openai-chat/from-upstream.js';

const ids = { id: 'chatcmpl-p', model: 'public-chat', created: 1700000000 };

// 'binary' units: any code point, lone surrogates included, to try the decoder's text skimmer
const text = fc.string({ unit: 'binary', maxLength: 16 });
const count = fc.integer({ min: 1, max: 100_000 });
// chat usage carries no zero apart from its absence, so optional counts are absent or positive
const usage: fc.Arbitrary<PivotUsage> = fc.record(
  { input: fc.nat(100_000), output: fc.nat(100_000), cacheRead: count, cacheWrite: count, reasoning: count },
  { requiredKeys: ['input', 'output'], noNullPrototype: true },
);
const toolCalls = fc.uniqueArray(
  fc.record(
    { id: fc.stringMatching(/^(call|toolu)_[A-Za-z0-9]{1,8}$/), name: fc.constantFrom('get_weather', 'search', 'f'), arguments: text },
    { noNullPrototype: true },
  ),
  { maxLength: 3, selector: (call) => call.id },
);
const answer: fc.Arbitrary<PivotResponse> = fc.record(
  { text, toolCalls, finish: fc.constantFrom('stop', 'length', 'tool_calls', 'stop_sequence', 'refusal'), usage },
  { requiredKeys: ['text', 'toolCalls', 'finish'], noNullPrototype: true },
);

/** `value` cut at the given points (each taken modulo its length + 1). */
function pieces(value: string, cuts: number[]): string[] {
  const at = [...new Set(cuts.map((cut) => cut % (value.length + 1)))].sort((a, b) => a - b);
  return [...at, value.length].map((end, i) => value.slice(i === 0 ? 0 : at[i - 1], end)).filter((piece) => piece !== '');
}

/** The answer as pivot events, as an upstream decoder gives them: text, then each call's fragments, finish, usage, done. */
function eventsOf(answer: PivotResponse, cuts: number[]): PivotEvent[] {
  const events: PivotEvent[] = pieces(answer.text, cuts).map((piece) => ({ type: 'text', text: piece }));
  answer.toolCalls.forEach((call, index) => {
    const [first = '', ...rest] = pieces(call.arguments, cuts);
    events.push({ type: 'tool_call', index, id: call.id, name: call.name, arguments: first });
    for (const piece of rest) events.push({ type: 'tool_call', index, arguments: piece });
  });
  events.push({ type: 'finish', finish: answer.finish });
  if (answer.usage) events.push({ type: 'usage', usage: answer.usage });
  events.push({ type: 'done' });
  return events;
}

/** What a decoder reads back of the stream, fed in byte pieces cut at `byteCuts`. */
function readBack(sse: string, byteCuts: number[]): { text: string; toolCalls: PivotToolCall[]; usage?: PivotUsage } {
  const bytes = Buffer.from(sse);
  const at = [...new Set(byteCuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b);
  const decoder = new ChatStreamDecoder();
  const events = [...[...at, bytes.length].flatMap((end, i) => decoder.push(bytes.subarray(i === 0 ? 0 : at[i - 1], end))), ...decoder.end()];
  const read: { text: string; toolCalls: PivotToolCall[]; usage?: PivotUsage } = { text: '', toolCalls: [] };
  for (const event of events) {
    if (event.type === 'text') read.text += event.text;
    if (event.type === 'tool_call' && event.id !== undefined)
      read.toolCalls[event.index] = { id: event.id, name: event.name ?? '', arguments: event.arguments };
    else if (event.type === 'tool_call') (read.toolCalls[event.index] as PivotToolCall).arguments += event.arguments;
    if (event.type === 'usage') read.usage = event.usage;
  }
  return read;
}

test('an answer streamed as chat chunks and read back by the chat decoder keeps its text, tool calls and usage', () => {
  fc.assert(
    fc.property(answer, fc.array(fc.nat(40), { maxLength: 4 }), fc.array(fc.nat(4000), { maxLength: 8 }), (answer, cuts, byteCuts) => {
      const encoder = new ChatStreamEncoder(ids, true);
      const sse = eventsOf(answer, cuts)
        .map((event) => encoder.push(event))
        .join('');
      const expected = { text: answer.text, toolCalls: answer.toolCalls, ...(answer.usage && { usage: answer.usage }) };
      assert.deepEqual(readBack(sse, byteCuts), expected);
    }),
    { numRuns: 300 },
  );
});
