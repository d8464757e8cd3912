// A chat completion answered to a Messages caller through the pivot: each fixture holds the upstream's
// answer and the whole message sent back.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { messageOf, messagesUsageOfPivot } from '../../../src/formats/messages/from-pivot.js';
import { pivotResponseOfChat, pivotUsageOfChat } from '../../../src/upstreams/openai-chat/from-upstream.js';
import type { ChatCompletion } from '../../../src/upstreams/openai-chat/types.js';

const ids = { id: 'msg_1', model: 'claude-sonnet-4-5' };

async function translates(name: string) {
  const file = new URL(`./fixtures/${name}.json`, import.meta.url);
  const { upstream, expected } = JSON.parse(await readFile(file, 'utf8'));
  assert.deepEqual(messageOf(pivotResponseOfChat(upstream), ids), expected);
}

test('a text answer becomes one text block ending the turn', () => translates('response-text'));

test('a reply cut by the token limit keeps its text and reports max_tokens', () => translates('response-cut-by-length'));

test('tool calls become tool_use blocks; empty arguments are {} and arguments that are no JSON object are kept under _raw', () =>
  translates('response-tool-calls'));

test('text comes before tool_use, and a tool turn that finished with stop still reports tool_use', () =>
  translates('response-text-then-tool-call-finished-with-stop'));

test('cached and cache-written tokens come out of input_tokens and are reported apart', () => translates('response-cached-usage'));

test('null content without usage gives no blocks, zero usage, and content_filter reports refusal', () => translates('response-null-content-filtered'));

test('a refusal with null content is sent as text', () => translates('response-refusal-text'));

test('reasoning comes first, as a thinking block without signature', () => translates('response-reasoning'));

test('each finish_reason maps to its stop_reason, and anything else ends the turn', () => {
  const finishes = ['stop', 'length', 'tool_calls', 'function_call', 'content_filter', 'insufficient_system_resource', '', null, undefined];
  const completion = (finish_reason: string | null | undefined) =>
    ({ id: 'chatcmpl-1', choices: [{ index: 0, message: { role: 'assistant', content: 'x' }, finish_reason }] }) as ChatCompletion;
  assert.deepEqual(
    finishes.map((finish) => messageOf(pivotResponseOfChat(completion(finish)), ids).stop_reason),
    ['end_turn', 'max_tokens', 'tool_use', 'tool_use', 'refusal', 'end_turn', 'end_turn', 'end_turn', 'end_turn'],
  );
});

test('usage whose cache counts exceed the prompt never reports negative input', () => {
  assert.deepEqual(messagesUsageOfPivot(pivotUsageOfChat({ prompt_tokens: 10, completion_tokens: 1, prompt_tokens_details: { cached_tokens: 12 } })), {
    input_tokens: 0,
    output_tokens: 1,
    cache_read_input_tokens: 12,
  });
});
