// Reading a content block's delta from an event's bytes: the same output counted as parsing the
// event counts, and any shape it does not know left to the parse.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { skimBlockDelta } from '../../../src/upstreams/anthropic/delta-skim.js';
import { MessagesStreamMeter } from '../../../src/upstreams/anthropic/usage.js';
import { meteredAlike, skimmedPiece } from '../../helpers/stream-skim.js';

const skim = (data: string) => skimmedPiece(skimBlockDelta, data);

const delta = (kind: string, field: string, piece: string, index = 0) =>
  JSON.stringify({ type: 'content_block_delta', index, delta: { type: kind, [field]: piece } });

test('a text, JSON input or thinking delta gives its piece as parsing the event would', () => {
  assert.equal(skim(delta('text_delta', 'text', 'Hello, wörld')), 'Hello, wörld');
  assert.equal(skim(delta('input_json_delta', 'partial_json', '{"city": "Par')), '{"city": "Par');
  assert.equal(skim(delta('thinking_delta', 'thinking', 'Let me see', 12)), 'Let me see');
  assert.equal(skim(delta('text_delta', 'text', '')), '');
});

test('a piece with escapes is unescaped', () => {
  const piece = 'say "hi"\n\ttab \\ slash é 😀 \u0001';
  assert.equal(skim(delta('text_delta', 'text', piece)), piece);
  assert.equal(skim('{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\\u00e9\\/"}}'), 'é/');
});

test('any other shape is left to the parse', () => {
  for (const data of [
    JSON.stringify({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 3 } }),
    delta('signature_delta', 'signature', 'abc'),
    JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'x', extra: 1 } }),
    JSON.stringify({ index: 0, type: 'content_block_delta', delta: { type: 'text_delta', text: 'x' } }),
    '{"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "x"}}',
    `${delta('text_delta', 'text', 'x')} `,
    '{"type":"content_block_delta","index":01,"delta":{"type":"text_delta","text":"x"}}',
    '{"type":"content_block_delta","index":,"delta":{"type":"text_delta","text":"x"}}',
    '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}',
    '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x',
  ]) {
    assert.equal(skim(data), undefined, data);
  }
});

test('data that JSON.parse refuses is refused, so nothing is counted that parsing would not count', () => {
  for (const data of [
    '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a\nb"}}', // a raw newline
    '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\\x41"}}', // no such escape
  ]) {
    assert.throws(() => JSON.parse(data));
    assert.equal(skim(data), undefined, data);
  }
});

test('a stream of thinking, text and tool input is metered the same, skimmed or parsed, and passes through unchanged', async () => {
  const fixture = JSON.parse(await readFile(new URL('./fixtures/stream-thinking-text-tool-use.json', import.meta.url), 'utf8'));
  const sse = (fixture.upstream as { type: string }[]).map((event) => `event: ${event.type}\r\ndata: ${JSON.stringify(event)}\r\n\r\n`).join('');
  const skimmed = await meteredAlike(sse, () => new MessagesStreamMeter('cl100k_base'));
  // the thinking, the two texts and the three pieces of tool input: not the signature
  assert.equal(skimmed.skimmed.length, 6);
  assert.ok(skimmed.output.length > 0);
});
