// Reading a chat stream's usage: the upstream's count wins; without it, what was generated.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { countTokens } from '../../src/billing/tokens.js';
import { ChatStreamMeter } from '../../src/upstreams/openai-chat/usage.js';

const chunk = (delta: object, usage: object | null = null) => ({
  id: 'c',
  object: 'chat.completion.chunk' as const,
  choices: [{ index: 0, delta, finish_reason: null }],
  usage: usage as any,
});

test("the upstream's usage chunk is the stream's reported usage", () => {
  const meter = new ChatStreamMeter('o200k_base');
  meter.observe(chunk({ role: 'assistant', content: '' }));
  meter.observe(chunk({ content: 'hi' }));
  meter.observe({ id: 'c', object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 } });
  assert.deepEqual(meter.reported(), { input_token: 11, output_token: 7 });
});

test('the output delivered is the generated text counted with the tokenizer', () => {
  const meter = new ChatStreamMeter('o200k_base');
  meter.observe(chunk({ role: 'assistant', content: '' }));
  meter.observe(chunk({ content: 'one' }));
  meter.observe(chunk({ content: ' two three' }));
  assert.deepEqual(meter.delivered(), { output_token: countTokens('one two three') });
  assert.equal(meter.reported(), undefined);
});

test('a stream is completed only by [DONE] with no error before it', () => {
  const meter = new ChatStreamMeter('o200k_base');
  meter.observe(chunk({ content: 'x' }));
  assert.equal(meter.completed, false);
  meter.markDone();
  assert.equal(meter.completed, true);
  const failed = new ChatStreamMeter('o200k_base');
  failed.observe({ error: { message: 'boom' } } as any);
  failed.markDone();
  assert.equal(failed.completed, false);
  assert.equal(failed.failed, true);
});
