// Usage read from every upstream format into the units it is billed in: each part of the prompt and
// of the output in its own dimension, nothing counted twice.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { unitsOfPivot } from '../../src/billing/usage-units.js';
import { chatUsageOf } from '../../src/formats/chat/from-pivot.js';
import { messagesUsageOfPivot } from '../../src/formats/messages/from-pivot.js';
import { tokensOfPivot } from '../../src/pipeline/translated-stream.js';
import { nativeTokens } from '../../src/upstreams/anthropic/usage.js';
import { pivotUsageOf as bedrockPivotUsage } from '../../src/upstreams/bedrock/from-upstream.js';
import { pivotUsageOf as geminiPivotUsage } from '../../src/upstreams/gemini/from-upstream.js';
import { tokensOf } from '../../src/upstreams/openai-chat/usage.js';
import { responsesTokens } from '../../src/upstreams/openai-responses/client.js';

test('OpenAI chat usage splits cached reads, audio input, reasoning and audio output out of its totals', () => {
  const usage = {
    prompt_tokens: 2006,
    completion_tokens: 300,
    total_tokens: 2306,
    prompt_tokens_details: { cached_tokens: 1920, audio_tokens: 50 },
    completion_tokens_details: { reasoning_tokens: 192, audio_tokens: 40, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  };
  assert.deepEqual(tokensOf(usage), {
    input_token: 36,
    cached_input_token: 1920,
    audio_input_token: 50,
    output_token: 68,
    reasoning_token: 192,
    audio_output_token: 40,
  });
});

test('OpenAI chat usage without details is all fresh input and text output', () => {
  assert.deepEqual(tokensOf({ prompt_tokens: 16, completion_tokens: 300, total_tokens: 316, prompt_tokens_details: { cached_tokens: 0 } }), {
    input_token: 16,
    output_token: 300,
  });
});

test("DeepSeek's cache hits are cached reads", () => {
  const usage = { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110, prompt_cache_hit_tokens: 64, prompt_cache_miss_tokens: 36 };
  assert.deepEqual(tokensOf(usage), { input_token: 36, cached_input_token: 64, output_token: 10 });
});

test('Anthropic usage bills uncached input, cache reads and both cache-write lifetimes apart, and counts web searches', () => {
  const usage = {
    input_tokens: 12,
    cache_creation_input_tokens: 3000,
    cache_read_input_tokens: 5000,
    cache_creation: { ephemeral_5m_input_tokens: 1000, ephemeral_1h_input_tokens: 2000 },
    output_tokens: 30,
    server_tool_use: { web_search_requests: 2 },
  };
  assert.deepEqual(nativeTokens(usage), {
    input_token: 12,
    cached_input_token: 5000,
    cache_write_token: 1000,
    cache_write_1h_token: 2000,
    output_token: 30,
    web_search: 2,
  });
});

test('Anthropic cache writes without their split are 5-minute writes', () => {
  assert.deepEqual(nativeTokens({ input_tokens: 5, cache_creation_input_tokens: 40, cache_read_input_tokens: 0, output_tokens: 3 }), {
    input_token: 5,
    cache_write_token: 40,
    output_token: 3,
  });
});

test('Gemini usage splits cached content, audio and image prompt parts, thoughts and audio answers', () => {
  const usage = {
    promptTokenCount: 1200,
    candidatesTokenCount: 80,
    thoughtsTokenCount: 500,
    cachedContentTokenCount: 1000,
    totalTokenCount: 1780,
    promptTokensDetails: [
      { modality: 'TEXT', tokenCount: 1000 },
      { modality: 'AUDIO', tokenCount: 120 },
      { modality: 'IMAGE', tokenCount: 80 },
    ],
    candidatesTokensDetails: [{ modality: 'AUDIO', tokenCount: 60 }],
  };
  assert.deepEqual(tokensOfPivot(geminiPivotUsage(usage)), {
    input_token: 0,
    cached_input_token: 1000,
    audio_input_token: 120,
    image_input_token: 80,
    output_token: 20,
    reasoning_token: 500,
    audio_output_token: 60,
  });
});

test('Bedrock usage adds its cache reads and writes beside the uncached input', () => {
  const usage = { inputTokens: 10, outputTokens: 7, totalTokens: 1017, cacheReadInputTokens: 900, cacheWriteInputTokens: 100 };
  assert.deepEqual(tokensOfPivot(bedrockPivotUsage(usage)), { input_token: 10, cached_input_token: 900, cache_write_token: 100, output_token: 7 });
});

test('OpenAI responses usage splits cached reads and reasoning out of its totals', () => {
  const usage = {
    input_tokens: 37,
    input_tokens_details: { cached_tokens: 32 },
    output_tokens: 11,
    output_tokens_details: { reasoning_tokens: 4 },
    total_tokens: 48,
  };
  assert.deepEqual(responsesTokens(usage), { input_token: 5, cached_input_token: 32, output_token: 7, reasoning_token: 4 });
});

test('parts reported beyond their whole are trimmed to it, never a negative unit', () => {
  assert.deepEqual(unitsOfPivot({ input: 10, output: 5, cacheRead: 8, cacheWrite: 6, reasoning: 9 }), {
    input_token: 0,
    cached_input_token: 8,
    cache_write_token: 2,
    output_token: 0,
    reasoning_token: 5,
  });
});

test('a whole that is not a sane figure is passed on unsplit, for the settle to replace and flag', () => {
  assert.deepEqual(unitsOfPivot({ input: -5, output: 3, cacheRead: 2 }), { input_token: -5, output_token: 3 });
});

test('translated to the messages format, the 1-hour cache writes and the web searches keep their fields', () => {
  const usage = { input: 100, output: 5, cacheRead: 40, cacheWrite: 30, cacheWrite1h: 20, webSearch: 2 };
  assert.deepEqual(messagesUsageOfPivot(usage), {
    input_tokens: 30,
    output_tokens: 5,
    cache_creation_input_tokens: 30,
    cache_read_input_tokens: 40,
    cache_creation: { ephemeral_5m_input_tokens: 10, ephemeral_1h_input_tokens: 20 },
    server_tool_use: { web_search_requests: 2 },
  });
  // and read back, the same units as the upstream's own usage
  assert.deepEqual(nativeTokens(messagesUsageOfPivot(usage)), unitsOfPivot(usage));
});

test('translated to the chat format, audio and image tokens keep their details', () => {
  const usage = { input: 100, output: 50, cacheRead: 10, audioInput: 20, imageInput: 30, reasoning: 5, audioOutput: 15 };
  const chat = chatUsageOf(usage);
  assert.deepEqual(chat.prompt_tokens_details, { cached_tokens: 10, audio_tokens: 20, image_tokens: 30 });
  assert.deepEqual(chat.completion_tokens_details, { reasoning_tokens: 5, audio_tokens: 15 });
  assert.deepEqual(tokensOf(chat), unitsOfPivot(usage));
});
