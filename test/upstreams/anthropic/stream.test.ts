// The messages event stream read into pivot events. A fixture's `upstream` lists the events as
// objects, each framed here as Anthropic frames it (`event:` equal to its type, then `data:`).
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import type { PivotEvent } from '../../../src/pivot/types.js';
import { MessagesStreamDecoder } from '../../../src/upstreams/anthropic/from-upstream.js';

/** Events as Anthropic frames them; a plain object list, as a fixture's wire events vary in shape. */
const sseOf = (events: Record<string, unknown>[]) => events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`).join('');

function decode(chunks: Buffer[]): PivotEvent[] {
  const decoder = new MessagesStreamDecoder();
  return [...chunks.flatMap((chunk) => decoder.push(chunk)), ...decoder.end()];
}

const inOnePiece = (sse: string) => decode([Buffer.from(sse)]);
const byteByByte = (sse: string) => decode([...Buffer.from(sse)].map((byte) => Buffer.of(byte)));

async function fixture(name: string): Promise<{ upstream: Record<string, unknown>[]; expected: PivotEvent[] }> {
  return JSON.parse(await readFile(new URL(`./fixtures/${name}.json`, import.meta.url), 'utf8'));
}

const start = (usage: Record<string, unknown>) => ({
  type: 'message_start',
  message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], stop_reason: null, stop_sequence: null, usage },
});

test('thinking with its signature, text and a tool_use block with input_json_delta stream as pivot events, usage with cache counts', async () => {
  const { upstream, expected } = await fixture('stream-thinking-text-tool-use');
  assert.deepEqual(inOnePiece(sseOf(upstream)), expected);
});

test('fed byte by byte, cutting characters apart, the stream gives the same events as in one piece', async () => {
  const sse = sseOf((await fixture('stream-thinking-text-tool-use')).upstream);
  assert.deepEqual(byteByByte(sse), inOnePiece(sse));
});

test('an error event becomes a pivot error carrying its message', () => {
  const sse = sseOf([
    start({ input_tokens: 12, output_tokens: 1 }),
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
  ]);
  assert.deepEqual(inOnePiece(sse).at(-1), { type: 'error', message: 'Overloaded' });
});

test("message_delta's cumulative counts replace message_start's, keeping the counts it leaves out", () => {
  const sse = sseOf([
    start({ input_tokens: 12, cache_read_input_tokens: 100, output_tokens: 1 }),
    { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 15 } },
    { type: 'message_delta', delta: {}, usage: { input_tokens: 12, cache_read_input_tokens: 100, output_tokens: 30 } },
    { type: 'message_stop' },
  ]);
  const usages = inOnePiece(sse).flatMap((event) => (event.type === 'usage' ? [event.usage] : []));
  assert.deepEqual(usages, [
    { input: 112, output: 1, cacheRead: 100 },
    { input: 112, output: 15, cacheRead: 100 },
    { input: 112, output: 30, cacheRead: 100 },
  ]);
});

test('a stop sequence finishes with stop_sequence and names it', () => {
  const sse = sseOf([{ type: 'message_delta', delta: { stop_reason: 'stop_sequence', stop_sequence: 'END' }, usage: { output_tokens: 3 } }]);
  assert.deepEqual(inOnePiece(sse)[0], { type: 'finish', finish: 'stop_sequence', stopSequence: 'END' });
});

test('two tool_use blocks after a text block are pivot calls 0 and 1, each delta on its own call', () => {
  const sse = sseOf([
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_A', name: 'f', input: {} } },
    { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"a":1}' } },
    { type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'toolu_B', name: 'g', input: {} } },
    { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{"b":2}' } },
  ]);
  assert.deepEqual(inOnePiece(sse), [
    { type: 'tool_call', index: 0, id: 'toolu_A', name: 'f', arguments: '' },
    { type: 'tool_call', index: 0, arguments: '{"a":1}' },
    { type: 'tool_call', index: 1, id: 'toolu_B', name: 'g', arguments: '' },
    { type: 'tool_call', index: 1, arguments: '{"b":2}' },
  ]);
});

test('a last event without its closing blank line is still read at the end', () => {
  assert.deepEqual(inOnePiece('event: message_stop\ndata: {"type":"message_stop"}'), [{ type: 'done' }]);
});

/** A decoder that counts the events it parsed: those it did not were read from their bytes. */
class CountingDecoder extends MessagesStreamDecoder {
  parsed = 0;
  protected override readData(data: string, events: PivotEvent[]): void {
    this.parsed += 1;
    super.readData(data, events);
  }
}

test('content block deltas are read from their bytes, giving the events a parse of each gives', async () => {
  const { upstream, expected } = await fixture('stream-thinking-text-tool-use');
  const skimming = new CountingDecoder();
  const skimmed = [...skimming.push(Buffer.from(sseOf(upstream))), ...skimming.end()];
  // The same events with the delta's fields in another order: not a shape the skim knows, so parsed.
  const reordered = upstream.map((event) => (event.type === 'content_block_delta' ? { delta: event.delta, ...event } : event));
  const parsing = new CountingDecoder();
  const parsed = [...parsing.push(Buffer.from(sseOf(reordered))), ...parsing.end()];
  assert.deepEqual(skimmed, expected);
  assert.deepEqual(parsed, expected);
  // thinking, two texts and three pieces of tool input were skimmed; the signature and the rest parsed
  assert.equal(parsing.parsed - skimming.parsed, 6);
});
