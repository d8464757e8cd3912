// What a legacy completion used: the stream meter's usage, text delivered and end marker, the
// prompt's forms and how many choices the upstream makes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { countTokens } from '../../../src/billing/tokens.js';
import { choicesMade, promptCount, requireCompletionPrompt } from '../../../src/upstreams/openai-completions/prompt.js';
import { CompletionStreamMeter, completionChoicesText } from '../../../src/upstreams/openai-completions/usage.js';

test('the stream meter counts every choice’s text, takes the usage chunk and completes on [DONE]', () => {
  const meter = new CompletionStreamMeter('o200k_base');
  meter.observe({ choices: [{ index: 0, text: 'hello' }] });
  meter.observe({ choices: [{ index: 1, text: ' world' }], usage: null });
  assert.deepEqual(meter.delivered(), { output_token: countTokens('hello world') });
  assert.equal(meter.reported(), undefined);
  meter.observe({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } });
  assert.equal(meter.completed, false);
  meter.markDone();
  assert.deepEqual([meter.completed, meter.reported()], [true, { input_token: 3, output_token: 4 }]);
});

test('an error chunk marks the stream failed, never completed', () => {
  const meter = new CompletionStreamMeter('o200k_base');
  meter.observe({ error: { message: 'boom' } } as never);
  meter.markDone();
  assert.deepEqual([meter.failed, meter.completed], [true, false]);
});

test('a whole completion’s text is its choices’ texts together', () => {
  assert.equal(completionChoicesText({ choices: [{ text: 'a' }, { text: 'b' }, { text: 3 }] }), 'ab');
});

test('prompts are counted by form, and choices by prompts times the larger of n and best_of', () => {
  assert.deepEqual([promptCount('x'), promptCount(['x', 'y']), promptCount([1, 2, 3]), promptCount([[1], [2]])], [1, 2, 1, 2]);
  assert.equal(choicesMade({ model: 'm', prompt: ['a', 'b'], n: 2, best_of: 3 }), 6);
  assert.equal(choicesMade({ model: 'm', prompt: 'a' }), 1);
});

test('a prompt of no known form is refused naming prompt, or the element at fault', () => {
  for (const ok of ['', 'x', ['x'], [1], [[1, 2]]]) requireCompletionPrompt(ok);
  assert.throws(() => requireCompletionPrompt(undefined), /^GatewayError: prompt: required/);
  assert.throws(() => requireCompletionPrompt({}), /^GatewayError: prompt: expected/);
  assert.throws(() => requireCompletionPrompt(['a', 1]), /^GatewayError: prompt\[1\]/);
  assert.throws(() => requireCompletionPrompt([[1], 'a']), /^GatewayError: prompt\[1\]/);
});
