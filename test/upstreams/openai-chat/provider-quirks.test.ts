// OpenAI-compatible providers report some things their own way; the pivot reads them into one
// meaning. DeepSeek's answers here follow the shapes of its API reference.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ChatStreamDecoder, pivotResponseOfChat, pivotUsageOfChat } from '../../../src/upstreams/openai-chat/from-upstream.js';
import type { ChatCompletion } from '../../../src/upstreams/openai-chat/types.js';

const deepseekUsage = {
  prompt_tokens: 1200,
  completion_tokens: 300,
  total_tokens: 1500,
  prompt_cache_hit_tokens: 1024,
  prompt_cache_miss_tokens: 176,
  completion_tokens_details: { reasoning_tokens: 120 },
};

test("DeepSeek's cache hits are the cached part of the prompt, which still counts every prompt token", () => {
  assert.deepEqual(pivotUsageOfChat(deepseekUsage), { input: 1200, output: 300, cacheRead: 1024, reasoning: 120 });
});

test("OpenAI's own cached_tokens win over a provider field of the same meaning", () => {
  const usage = { ...deepseekUsage, prompt_tokens_details: { cached_tokens: 512 } };
  assert.equal(pivotUsageOfChat(usage).cacheRead, 512);
});

test("DeepSeek's reasoning_content in a whole answer is the answer's reasoning, apart from its text", () => {
  const completion = {
    id: 'd1',
    object: 'chat.completion',
    model: 'deepseek-reasoner',
    choices: [{ index: 0, message: { role: 'assistant', content: '42', reasoning_content: 'Six times seven.' }, finish_reason: 'stop' }],
    usage: deepseekUsage,
  } as unknown as ChatCompletion;
  const answer = pivotResponseOfChat(completion);
  assert.equal(answer.text, '42');
  assert.deepEqual(answer.reasoning, [{ text: 'Six times seven.' }]);
});

test("DeepSeek's reasoning_content deltas stream as reasoning before the answer's text", () => {
  const chunk = (delta: object, finish: string | null = null) =>
    `data: ${JSON.stringify({ id: 'd1', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const body = [
    chunk({ role: 'assistant', content: null, reasoning_content: 'Six ' }),
    chunk({ content: null, reasoning_content: 'times seven.' }),
    chunk({ content: '42' }),
    chunk({ content: '' }, 'stop'),
    `data: ${JSON.stringify({ id: 'd1', object: 'chat.completion.chunk', choices: [], usage: deepseekUsage })}\n\n`,
    'data: [DONE]\n\n',
  ].join('');
  const events = new ChatStreamDecoder().push(Buffer.from(body));
  assert.deepEqual(events, [
    { type: 'reasoning', text: 'Six ' },
    { type: 'reasoning', text: 'times seven.' },
    { type: 'text', text: '42' },
    { type: 'finish', finish: 'stop' },
    { type: 'usage', usage: { input: 1200, output: 300, cacheRead: 1024, reasoning: 120 } },
    { type: 'done' },
  ]);
});
