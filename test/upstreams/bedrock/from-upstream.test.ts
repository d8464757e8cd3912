// pivotResponseOf and pivotUsageOf on Converse answers: AWS's documented examples, and a cached Claude answer.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { pivotResponseOf, pivotUsageOf } from '../../../src/upstreams/bedrock/from-upstream.js';

async function fixture(name: string): Promise<{ upstream: any; expected: unknown }> {
  return JSON.parse(await readFile(new URL(`./fixtures/${name}`, import.meta.url), 'utf8'));
}

test("AWS's example answer reads as text that stopped at the end of its turn", async () => {
  const { upstream, expected } = await fixture('response-text.json');
  assert.deepEqual(pivotResponseOf(upstream), expected);
});

test("AWS's top_song tool request reads as one tool call with its input as JSON text", async () => {
  const { upstream, expected } = await fixture('response-tool-use.json');
  assert.deepEqual(pivotResponseOf(upstream), expected);
});

test('signed reasoning is kept, redacted reasoning left out, and a cut answer reports length', async () => {
  const { upstream, expected } = await fixture('response-reasoning-cached.json');
  assert.deepEqual(pivotResponseOf(upstream), expected);
});

test('the pivot input counts the uncached prompt plus the tokens read from and written to the cache', () => {
  assert.deepEqual(pivotUsageOf({ inputTokens: 10, outputTokens: 5, cacheReadInputTokens: 100, cacheWriteInputTokens: 50 }), {
    input: 160,
    output: 5,
    cacheRead: 100,
    cacheWrite: 50,
  });
});

test('each stop reason maps to its pivot finish', () => {
  const finishOf = (stopReason: string) => pivotResponseOf({ stopReason }).finish;
  assert.deepEqual(['end_turn', 'tool_use', 'max_tokens', 'stop_sequence', 'guardrail_intervened', 'content_filtered'].map(finishOf), [
    'stop',
    'tool_calls',
    'length',
    'stop_sequence',
    'refusal',
    'refusal',
  ]);
});
