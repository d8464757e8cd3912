// The four forms of an embeddings `input`, and the refusals that name what is wrong.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { embeddingInputFault, embeddingInputs } from '../../../src/upstreams/openai-embeddings/input.js';

test('each of the four forms is read as texts or token arrays', () => {
  assert.deepEqual(embeddingInputs('a'), { kind: 'texts', texts: ['a'] });
  assert.deepEqual(embeddingInputs(['a', 'b']), { kind: 'texts', texts: ['a', 'b'] });
  assert.deepEqual(embeddingInputs([1, 2]), { kind: 'tokens', ids: [[1, 2]] });
  assert.deepEqual(embeddingInputs([[1], [2, 3]]), { kind: 'tokens', ids: [[1], [2, 3]] });
});

test('the four forms pass; no input is left to the schema', () => {
  for (const input of ['a', ['a', 'b'], [0, 1], [[0], [1, 2]], undefined]) assert.equal(embeddingInputFault(input), undefined, JSON.stringify(input));
});

test('each refusal names the field and says what is wrong', () => {
  const cases: [unknown, string][] = [
    ['', 'input: must not be an empty string'],
    [[], 'input: must not be an empty array'],
    [['a', ''], 'input[1]: must not be an empty string'],
    [Array.from({ length: 2049 }, () => 'a'), 'input: at most 2048 inputs, got 2049'],
    [Array.from({ length: 2049 }, () => 1), 'input: at most 2048 token ids, got 2049'],
    [[1, 1.5], 'input[1]: a token id must be a non-negative integer'],
    [[[1], []], 'input[1]: must not be an empty array'],
    [[[1], 'a'], 'input[1]: expected an array of token ids, as input[0] is (one form per array)'],
    [['a', ['b']], 'input[1]: expected a string, as input[0] is (one form per array)'],
    [[null], 'input[0]: must be a string, or an array of strings, of token ids or of token-id arrays'],
    [42, 'input: must be a string, or an array of strings, of token ids or of token-id arrays'],
  ];
  for (const [input, fault] of cases) assert.equal(embeddingInputFault(input), fault, JSON.stringify(input).slice(0, 40));
});
