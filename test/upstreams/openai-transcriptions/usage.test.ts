// What a transcription is billed, read from the upstream's answer: its usage, verbose_json's
// duration, or the audio's measured length; and the stream's meter, for a caller who leaves.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ModelConfig } from '../../../src/config/schema.js';
import { TranscriptionStreamMeter } from '../../../src/upstreams/openai-transcriptions/stream-meter.js';
import { billedUnits, reportedUsage, transcriptionEstimate } from '../../../src/upstreams/openai-transcriptions/usage.js';

const model = (price: ModelConfig['price']) => ({ price }) as ModelConfig;
const perSecond = model({ second: 100 });
const perToken = model({ input_token: 2_500_000, output_token: 10_000_000 });

test('usage is read from json, verbose_json and the done event', () => {
  assert.deepEqual(reportedUsage({ text: 'hi', usage: { type: 'duration', seconds: 3 } }), { type: 'duration', seconds: 3 });
  assert.deepEqual(reportedUsage({ type: 'transcript.text.done', usage: { type: 'tokens', input_tokens: 40, output_tokens: 7, total_tokens: 47 } }), {
    type: 'tokens',
    inputTokens: 40,
    outputTokens: 7,
  });
  assert.deepEqual(reportedUsage({ text: 'hi', duration: 2.4, segments: [] }), { type: 'duration', seconds: 2.4 });
  assert.equal(reportedUsage({ text: 'hi' }), undefined);
  assert.equal(reportedUsage('hi'), undefined);
});

test('the bill is the reported unit the model is priced in, else the measured estimate', () => {
  const measured = { second: 3 };
  assert.deepEqual(billedUnits({ type: 'duration', seconds: 2.4 }, perSecond, measured), { second: 2.4 });
  assert.deepEqual(billedUnits({ type: 'tokens', inputTokens: 40, outputTokens: 7 }, perToken, measured), { input_token: 40, output_token: 7 });
  // tokens for a model priced in seconds, seconds for one priced in tokens, or nothing: the measured length
  assert.deepEqual(billedUnits({ type: 'tokens', inputTokens: 40, outputTokens: 7 }, perSecond, measured), measured);
  assert.deepEqual(billedUnits({ type: 'duration', seconds: 2 }, perToken, measured), measured);
  assert.deepEqual(billedUnits(undefined, perSecond, measured), measured);
});

test('the hold is whole seconds, at least one; tokens only for a model priced in them', () => {
  assert.deepEqual(transcriptionEstimate(2.01, 10, perSecond), { second: 3 });
  assert.deepEqual(transcriptionEstimate(0.2, 0, perSecond), { second: 1 });
  assert.deepEqual(transcriptionEstimate(2, 6, perToken), { second: 2, input_token: 56, output_token: 20 });
});

test('the stream meter completes at transcript.text.done and bills its usage', () => {
  const meter = new TranscriptionStreamMeter(perSecond, { second: 3 });
  meter.observe({ type: 'transcript.text.delta', delta: 'hello' });
  assert.equal(meter.completed, false);
  assert.equal(meter.reported(), undefined);
  meter.observe({ type: 'transcript.text.done', text: 'hello', usage: { type: 'duration', seconds: 2 } } as object);
  assert.deepEqual([meter.completed, meter.reported()], [true, { second: 2 }]);
});

test('a caller who leaves pays nothing before the first text, and the whole audio after', () => {
  const meter = new TranscriptionStreamMeter(perSecond, { second: 3 });
  assert.deepEqual([meter.audioCovered(), meter.delivered()], [{ kind: 'none' }, {}]);
  meter.observe({ type: 'transcript.text.delta', delta: '' });
  assert.deepEqual(meter.audioCovered(), { kind: 'none' });
  meter.observe({ type: 'transcript.text.delta', delta: 'hello' });
  assert.deepEqual([meter.audioCovered(), meter.delivered()], [{ kind: 'measured', units: { second: 3 } }, { second: 3 }]);
});

test('an error event fails the stream, even after a done', () => {
  const meter = new TranscriptionStreamMeter(perSecond, { second: 3 });
  meter.observe({ type: 'error', error: { message: 'boom' } });
  assert.equal(meter.failed, true);
  const other = new TranscriptionStreamMeter(perSecond, { second: 3 });
  other.observe({ error: { message: 'boom' } });
  other.observe({ type: 'transcript.text.done' });
  assert.deepEqual([other.failed, other.completed], [true, false]);
});
