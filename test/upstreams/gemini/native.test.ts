// Gemini API calls passed through to a gemini channel (native.ts): GeminiStreamMeter on its own, and
// callGeminiNative / countGeminiTokensNative against a started sandbox.
import assert from 'node:assert/strict';
import type { Readable } from 'node:stream';
import { after, before, test } from 'node:test';
import type { FastifyBaseLogger } from 'fastify';
import type { ChannelConfig, ModelConfig } from '../../../src/config/schema.js';
import { jsonBodyText } from '../../../src/json-text.js';
import type { ResolvedModel } from '../../../src/pipeline/types.js';
import { type Sandbox, startSandbox } from '../../../src/sandbox/server.js';
import { callGeminiNative, countGeminiTokensNative, GeminiStreamMeter } from '../../../src/upstreams/gemini/native.js';
import { createUpstreams, type Upstreams } from '../../../src/upstreams/pool.js';
import { parseSse } from '../../sandbox/sandbox-client.js';

const chunk = (text: string, extra: Record<string, unknown> = {}) => ({ candidates: [{ content: { role: 'model', parts: [{ text }] }, index: 0, ...extra }] });

test('a finished stream reports its last usage, thoughts counted as reasoning', () => {
  const meter = new GeminiStreamMeter('o200k_base');
  meter.observe({ ...chunk('Hi'), usageMetadata: { promptTokenCount: 9 } });
  meter.observe({ ...chunk(' there', { finishReason: 'STOP' }), usageMetadata: { promptTokenCount: 9, candidatesTokenCount: 2, thoughtsTokenCount: 30 } });
  assert.deepEqual([meter.completed, meter.reported()], [true, { input_token: 9, output_token: 2, reasoning_token: 30 }]);
});

test('a stream cut before its finish reports at least the output delivered', () => {
  const meter = new GeminiStreamMeter('o200k_base');
  meter.observe({ ...chunk('one two three four five'), usageMetadata: { promptTokenCount: 4 } });
  const delivered = meter.delivered().output_token;
  assert.ok(delivered > 0);
  assert.deepEqual([meter.completed, meter.reported()], [false, { input_token: 4, output_token: delivered }]);
});

test('an error chunk marks the stream failed, never completed', () => {
  const meter = new GeminiStreamMeter('o200k_base');
  meter.observe({ error: { code: 500, message: 'boom', status: 'INTERNAL' } } as never);
  meter.observe(chunk('', { finishReason: 'STOP' }));
  assert.deepEqual([meter.failed, meter.completed], [true, false]);
});

test('a stream that carried no usage reports none, so the bill falls back to the count', () => {
  const meter = new GeminiStreamMeter('o200k_base');
  meter.observe(chunk('text', { finishReason: 'STOP' }));
  assert.equal(meter.reported(), undefined);
});

let sandbox: Sandbox;
let upstreams: Upstreams;
before(async () => {
  sandbox = await startSandbox();
  const channel: ChannelConfig = {
    kind: 'gemini',
    base_url: sandbox.url,
    api_key: 'k',
    connections: 4,
    connection_wait_ms: 1000,
    timeouts: { connect_ms: 1000, headers_ms: 5000, body_ms: 5000 },
  };
  upstreams = createUpstreams({ studio: channel });
});
after(async () => {
  await upstreams.close();
  await sandbox.close();
});

const hello = { contents: [{ role: 'user', parts: [{ text: 'hello there' }] }] };
const modelOn = (): ResolvedModel => ({
  id: 'public-gemini',
  config: { tokenizer: 'o200k_base' } as ModelConfig,
  upstreamModel: 'gemini-2.5-flash',
  upstream: upstreams.get('studio'),
  routes: [],
});
const call = (form: 'plain' | 'sse' | 'array') =>
  callGeminiNative({ body: hello, model: modelOn(), estimate: { input_token: 3 }, signal: AbortSignal.timeout(10_000) }, form);

async function textOf(body: Readable): Promise<string> {
  let text = '';
  for await (const piece of body) text += String(piece);
  return text;
}

test('a plain call passes the answer through and bills the upstream usage', async () => {
  const answer = await call('plain');
  assert.ok(answer.kind === 'json');
  assert.deepEqual(
    [JSON.parse(jsonBodyText(answer.body)).candidates[0].content.parts, answer.units],
    [[{ text: 'Sandbox says: hello there' }], { input_token: 3, output_token: 4 }],
  );
});

test('an SSE call passes the events through and its meter ends complete with the usage', async () => {
  const answer = await call('sse');
  assert.ok(answer.kind === 'stream');
  const chunks = parseSse(await textOf(answer.body));
  assert.deepEqual(
    [answer.contentType, chunks.map((c) => c.candidates[0].content.parts[0].text).join(''), answer.meter.completed, answer.meter.reported()],
    ['text/event-stream; charset=utf-8', 'Sandbox says: hello there', true, { input_token: 3, output_token: 4 }],
  );
});

test('a JSON-array call is one valid JSON array of the same chunks as the SSE call', async () => {
  const array = await call('array');
  const sse = await call('sse');
  assert.ok(array.kind === 'stream' && sse.kind === 'stream');
  assert.deepEqual(JSON.parse(await textOf(array.body)), parseSse(await textOf(sse.body)));
});

test('countTokens is asked of the channel and its totalTokens returned', async () => {
  assert.equal(await countGeminiTokensNative(modelOn(), hello, {} as FastifyBaseLogger), 3);
});
