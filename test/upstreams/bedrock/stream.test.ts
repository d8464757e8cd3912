// ConverseStreamDecoder on binary event stream frames made by Smithy's codec, as Bedrock sends them.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import type { PivotEvent } from '../../../src/pivot/types.js';
import { ConverseStreamDecoder } from '../../../src/upstreams/bedrock/stream.js';

const codec = new EventStreamCodec(toUtf8, fromUtf8);

function frame(headers: Record<string, string>, payload: unknown): Buffer {
  const typed = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, { type: 'string' as const, value }]));
  const bytes = codec.encode({ headers: typed, body: fromUtf8(JSON.stringify(payload)) });
  return Buffer.from(bytes);
}

const event = (type: string, payload: unknown) => frame({ ':event-type': type, ':content-type': 'application/json', ':message-type': 'event' }, payload);
const exception = (type: string, message: string) =>
  frame({ ':exception-type': type, ':content-type': 'application/json', ':message-type': 'exception' }, { message });

async function streamFixture(): Promise<{ body: Buffer; expected: PivotEvent[] }> {
  const { frames, expected } = JSON.parse(await readFile(new URL('./fixtures/stream-text-then-tools.json', import.meta.url), 'utf8'));
  return { body: Buffer.concat(frames.map((f: { event: string; payload: unknown }) => event(f.event, f.payload))), expected };
}

function decodeInChunks(body: Buffer, size: number): PivotEvent[] {
  const decoder = new ConverseStreamDecoder();
  const events: PivotEvent[] = [];
  for (let at = 0; at < body.length; at += size) events.push(...decoder.push(body.subarray(at, at + size)));
  return [...events, ...decoder.end()];
}

test('a whole stream in one chunk gives its text, tool calls counted across the stream, finish, usage and done', async () => {
  const { body, expected } = await streamFixture();
  assert.deepEqual(decodeInChunks(body, body.length), expected);
});

test('the same stream fed one byte at a time gives the same events', async () => {
  const { body, expected } = await streamFixture();
  assert.deepEqual(decodeInChunks(body, 1), expected);
});

test('frames split across chunks of odd sizes give the same events', async () => {
  const { body, expected } = await streamFixture();
  assert.deepEqual(decodeInChunks(body, 37), expected);
});

test('the stream is whole only at metadata: messageStop alone gives no done', () => {
  const body = Buffer.concat([event('messageStart', { role: 'assistant' }), event('messageStop', { stopReason: 'end_turn' })]);
  assert.deepEqual(decodeInChunks(body, body.length), [{ type: 'finish', finish: 'stop' }]);
});

test('an exception frame mid-stream gives an error event, and nothing after it is read', () => {
  const body = Buffer.concat([
    event('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Hel' } }),
    exception('throttlingException', 'Too many tokens, please wait before trying again.'),
    event('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'lo' } }),
  ]);
  assert.deepEqual(decodeInChunks(body, 5), [
    { type: 'text', text: 'Hel' },
    { type: 'error', message: 'throttlingException: Too many tokens, please wait before trying again.' },
  ]);
});

test('a frame whose checksum fails gives an error event', () => {
  const broken = event('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Hello' } });
  broken.writeUInt8(broken.readUInt8(broken.length - 20) ^ 0xff, broken.length - 20); // a payload byte: the message CRC no longer matches
  const [first] = decodeInChunks(broken, broken.length);
  assert.equal(first?.type, 'error');
});

test('reasoning text and its signature come as reasoning events', () => {
  const body = Buffer.concat([
    event('contentBlockDelta', { contentBlockIndex: 0, delta: { reasoningContent: { text: 'Thinking.' } } }),
    event('contentBlockDelta', { contentBlockIndex: 0, delta: { reasoningContent: { signature: 'EqQB' } } }),
  ]);
  assert.deepEqual(decodeInChunks(body, body.length), [
    { type: 'reasoning', text: 'Thinking.' },
    { type: 'reasoning', text: '', signature: 'EqQB' },
  ]);
});

test('a body cut inside a frame gives nothing for the partial frame', () => {
  const whole = event('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Hello' } });
  assert.deepEqual(decodeInChunks(whole.subarray(0, whole.length - 1), 7), []);
});

test('a frame claiming more than the format allows gives an error event rather than a wait for its bytes', () => {
  const prelude = Buffer.alloc(12);
  prelude.writeUInt32BE(0x7fffffff, 0);
  assert.deepEqual(decodeInChunks(prelude, prelude.length), [{ type: 'error', message: 'an event stream frame claims 2147483647 bytes' }]);
});
