// Reading a chat stream's usage: the upstream's count wins; without it, what was generated.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ChatStreamMeter } from '../../src/upstreams/openai-chat/usage.js';

const chunk = (delta: object, usage: object | null = null) => ({ id: 'c', object: 'chat.completion.chunk' as const, choices: [{ index: 0, delta, finish_reason: null }], usage: usage as any });

test("the upstream's usage chunk settles the stream", () => {
  const meter = new ChatStreamMeter();
  meter.observe(chunk({ role: 'assistant', content: '' }));
  meter.observe(chunk({ content: 'hi' }));
  meter.observe({ id: 'c', object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 } });
  assert.deepEqual(meter.tokens(999), { input_token: 11, output_token: 7 });
});

test('a stream cut before its usage bills the prompt estimate and one token per generated chunk', () => {
  const meter = new ChatStreamMeter();
  meter.observe(chunk({ role: 'assistant', content: '' }));
  meter.observe(chunk({ content: 'one' }));
  meter.observe(chunk({ content: ' two' }));
  meter.observe(chunk({ tool_calls: [{ index: 0, function: { arguments: '{' } }] }));
  assert.deepEqual(meter.tokens(40), { input_token: 40, output_token: 3 });
});
