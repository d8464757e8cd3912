import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { countTokensResponseOf, generateContentResponseOf } from '../../../src/formats/gemini/from-pivot.js';
import type { PivotFinish } from '../../../src/pivot/types.js';

const ids = { model: 'public-model', responseId: 'r1' };

async function fixture(name: string) {
  return JSON.parse(await readFile(new URL(`./fixtures/${name}.json`, import.meta.url), 'utf8'));
}

test('a text answer is one candidate with one text part, STOP and the usage', async () => {
  const { answer, ids, expected } = await fixture('response-text');
  assert.deepEqual(generateContentResponseOf(answer, ids), expected);
});

test('a function-call answer has its thought first, then the call with parsed args; thoughts are counted apart', async () => {
  const { answer, ids, expected } = await fixture('response-function-call');
  assert.deepEqual(generateContentResponseOf(answer, ids), expected);
});

test('each pivot finish has its Gemini finishReason', () => {
  const finishes: PivotFinish[] = ['stop', 'length', 'tool_calls', 'refusal', 'stop_sequence'];
  const reasons = finishes.map((finish) => generateContentResponseOf({ text: 'x', toolCalls: [], finish }, ids).candidates?.[0]?.finishReason);
  assert.deepEqual(reasons, ['STOP', 'MAX_TOKENS', 'STOP', 'SAFETY', 'STOP']);
});

test('arguments that are not a JSON object become empty args rather than text the caller cannot read', () => {
  const answer = { text: '', toolCalls: [{ id: 'c', name: 'f', arguments: '{"cut' }], finish: 'length' as const };
  assert.deepEqual(generateContentResponseOf(answer, ids).candidates?.[0]?.content?.parts, [{ functionCall: { id: 'c', name: 'f', args: {} } }]);
});

test('an answer without usage has no usageMetadata, not made-up zeros', () => {
  assert.equal('usageMetadata' in generateContentResponseOf({ text: 'x', toolCalls: [], finish: 'stop' }, ids), false);
});

test('a token count is answered as totalTokens', () => {
  assert.deepEqual(countTokensResponseOf(31), { totalTokens: 31 });
});
