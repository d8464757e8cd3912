// A whole Anthropic message read into the pivot: each fixture holds the message (the messages
// reference's own examples) and the whole pivot answer expected of it.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { pivotResponseOfMessage, pivotUsageOfMessages } from '../../../src/upstreams/anthropic/from-upstream.js';

async function translates(name: string) {
  const { upstream, expected } = JSON.parse(await readFile(new URL(`./fixtures/${name}.json`, import.meta.url), 'utf8'));
  assert.deepEqual(pivotResponseOfMessage(upstream), expected);
}

test('a text answer gives its text, a stop finish and its usage, zero cache counts left out', () => translates('response-text'));

test('a text answer with tool_use blocks gives its text and each call, input written as JSON text', () => translates('response-tool-use'));

test('a thinking answer keeps its signature, drops redacted thinking, joins its text blocks and counts cache in the input', () =>
  translates('response-thinking'));

test('a stop sequence ends the answer with stop_sequence and names the sequence', () => {
  const answer = pivotResponseOfMessage({
    content: [{ type: 'text', text: 'Hi' }],
    stop_reason: 'stop_sequence',
    stop_sequence: '\n\nHuman:',
  });
  assert.deepEqual(answer, { text: 'Hi', toolCalls: [], finish: 'stop_sequence', stopSequence: '\n\nHuman:' });
});

test('each stop_reason becomes its pivot finish', () => {
  const reasons = ['end_turn', 'pause_turn', 'max_tokens', 'model_context_window_exceeded', 'tool_use', 'refusal'];
  assert.deepEqual(
    reasons.map((reason) => pivotResponseOfMessage({ content: [], stop_reason: reason }).finish),
    ['stop', 'stop', 'length', 'length', 'tool_calls', 'refusal'],
  );
});

test('the pivot input counts uncached input, cache reads and cache writes: the whole prompt', () => {
  assert.deepEqual(pivotUsageOfMessages({ input_tokens: 12, cache_read_input_tokens: 2000, cache_creation_input_tokens: 100, output_tokens: 5 }), {
    input: 2112,
    output: 5,
    cacheRead: 2000,
    cacheWrite: 100,
  });
});

test('null cache counts, as some messages-compatible upstreams send, count as none', () => {
  assert.deepEqual(pivotUsageOfMessages({ input_tokens: 12, cache_read_input_tokens: null, cache_creation_input_tokens: null, output_tokens: 5 }), {
    input: 12,
    output: 5,
  });
});
