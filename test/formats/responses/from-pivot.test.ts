import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { responseOf } from '../../../src/formats/responses/from-pivot.js';
import type { PivotResponse } from '../../../src/pivot/types.js';

async function fixture(name: string) {
  return JSON.parse(await readFile(new URL(`./fixtures/${name}.json`, import.meta.url), 'utf8'));
}

const ids = { id: 'resp_1', model: 'public-model', createdAt: 1700000000 };
const body = { model: 'public-model', input: 'hi' };

test('a text answer is a completed response with one message and the usage', async () => {
  const { answer, ids, body, expected } = await fixture('response-text');
  assert.deepEqual(responseOf(answer, ids, body), expected);
});

test('a function-call answer after reasoning has a reasoning item, then a function_call item, with the settings echoed', async () => {
  const { answer, ids, body, expected } = await fixture('response-function-call');
  assert.deepEqual(responseOf(answer, ids, body), expected);
});

test('an answer cut by the token limit is incomplete for max_output_tokens, its message incomplete', () => {
  const answer: PivotResponse = { text: 'Once upon', toolCalls: [], finish: 'length', usage: { input: 5, output: 16 } };
  const response = responseOf(answer, ids, body);
  assert.deepEqual(
    [response.status, response.incomplete_details, response.output.map((item) => item.type === 'message' && item.status)],
    ['incomplete', { reason: 'max_output_tokens' }, ['incomplete']],
  );
});

test('an answer stopped by a content filter is incomplete for content_filter', () => {
  const response = responseOf({ text: '', toolCalls: [], finish: 'refusal' }, ids, body);
  assert.deepEqual([response.status, response.incomplete_details], ['incomplete', { reason: 'content_filter' }]);
});

test('an answer without usage says null, not a made-up zero', () => {
  assert.equal(responseOf({ text: 'hi', toolCalls: [], finish: 'stop' }, ids, body).usage, null);
});

test('reasoning keeps its signature out of the answer unless reasoning.encrypted_content was included', () => {
  const answer: PivotResponse = { text: 'hi', reasoning: [{ text: 'think', signature: 'sig' }], toolCalls: [], finish: 'stop' };
  assert.deepEqual(responseOf(answer, ids, body).output[0], { type: 'reasoning', id: 'rs_1_0', summary: [{ type: 'summary_text', text: 'think' }] });
});

test('store is echoed false whatever was asked: nothing of a translated call is kept', () => {
  assert.equal(responseOf({ text: 'hi', toolCalls: [], finish: 'stop' }, ids, { ...body, store: true }).store, false);
});
