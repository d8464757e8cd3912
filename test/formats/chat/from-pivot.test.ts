// A pivot answer written as a whole chat completion: each fixture holds the answer and the whole
// completion expected of it (shaped as OpenAI's chat completions reference shows one).
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { chatCompletionOf } from '../../../src/formats/chat/from-pivot.js';
import type { PivotFinish } from '../../../src/pivot/types.js';

const ids = { id: 'chatcmpl-1', model: 'public-chat', created: 1700000000 };

async function translates(name: string) {
  const { answer, expected } = JSON.parse(await readFile(new URL(`./fixtures/${name}.json`, import.meta.url), 'utf8'));
  assert.deepEqual(chatCompletionOf(answer, ids), expected);
}

test('a text answer keeps its text, joins its reasoning into reasoning_content and reports cache reads and writes in prompt_tokens_details', () =>
  translates('response-text'));

test('an answer of tool calls only has null content and one function tool call per call', () => translates('response-tool-calls'));

test('each pivot finish becomes its chat finish_reason: a stop sequence is a stop, a refusal a content_filter', () => {
  const finishes: PivotFinish[] = ['stop', 'stop_sequence', 'length', 'tool_calls', 'refusal'];
  assert.deepEqual(
    finishes.map((finish) => chatCompletionOf({ text: 'x', toolCalls: [], finish }, ids).choices[0]?.finish_reason),
    ['stop', 'stop', 'length', 'tool_calls', 'content_filter'],
  );
});

test('an answer without usage has no usage field', () => {
  assert.equal('usage' in chatCompletionOf({ text: 'x', toolCalls: [], finish: 'stop' }, ids), false);
});

test('an empty answer without tool calls has empty, not null, content', () => {
  assert.equal(chatCompletionOf({ text: '', toolCalls: [], finish: 'length' }, ids).choices[0]?.message.content, '');
});
