// The session collector: final sentences, audio in order, usage, and how the session ended.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EVENT, type ResponseMeta, type TranslateResponse } from '../../../src/upstreams/volc-ast/proto.js';
import { isTransientFailure, TranslationCollector } from '../../../src/upstreams/volc-ast/session.js';

const meta = (over: Partial<ResponseMeta> = {}): ResponseMeta => ({ SessionID: 's', Sequence: 0, StatusCode: 0, Message: '', ...over });
const said = (event: number, over: Partial<TranslateResponse> = {}): TranslateResponse => ({ event, data: Buffer.alloc(0), text: '', ...over });

test('final source and translated sentences are joined with spaces in order; partials are ignored', () => {
  const collector = new TranslationCollector();
  for (const response of [
    said(EVENT.SessionStarted),
    said(EVENT.SourceSubtitleStart),
    said(EVENT.SourceSubtitleResponse, { text: 'Hel' }),
    said(EVENT.SourceSubtitleEnd, { text: 'Hello there.' }),
    said(EVENT.TranslationSubtitleStart),
    said(EVENT.TranslationSubtitleResponse, { text: 'Bon' }),
    said(EVENT.TranslationSubtitleEnd, { text: ' Bonjour. ' }),
    said(EVENT.SourceSubtitleEnd, { text: 'Again.' }),
    said(EVENT.SourceSubtitleEnd, { text: '   ' }),
    said(EVENT.TranslationSubtitleEnd, { text: 'Encore.' }),
  ])
    collector.observe(response);
  assert.deepEqual(
    { started: collector.started, source: collector.sourceText, text: collector.text, outcome: collector.outcome },
    { started: true, source: 'Hello there. Again.', text: 'Bonjour. Encore.', outcome: { state: 'running' } },
  );
});

test('translated audio reaches the callback chunk by chunk, in arrival order, empty ones skipped', () => {
  const chunks: string[] = [];
  const collector = new TranslationCollector((chunk) => chunks.push(chunk.toString()));
  collector.observe(said(EVENT.TTSResponse, { data: Buffer.from('OggS-1') }));
  collector.observe(said(EVENT.TranslationSubtitleEnd, { text: 'x' }));
  collector.observe(said(EVENT.TTSResponse));
  collector.observe(said(EVENT.TTSResponse, { data: Buffer.from('OggS-2') }));
  assert.deepEqual(chunks, ['OggS-1', 'OggS-2']);
  assert.equal(collector.audioBytes, 12);
});

test('usage comes from the UsageResponse billing, a later report replacing an earlier one', () => {
  const collector = new TranslationCollector();
  assert.equal(collector.usage, undefined);
  collector.observe(said(EVENT.UsageResponse, { response_meta: meta() })); // no billing: nothing to take
  assert.equal(collector.usage, undefined);
  collector.observe(said(EVENT.UsageResponse, { response_meta: meta({ billing: { duration_ms: 900, input_tokens: 5, output_tokens: 7 } }) }));
  collector.observe(said(EVENT.UsageResponse, { response_meta: meta({ billing: { duration_ms: 1800, input_tokens: 10, output_tokens: 14 } }) }));
  assert.deepEqual(collector.usage, { input_token: 10, output_token: 14, durationMs: 1800 });
});

test('SessionFinished ends the session and nothing after it counts', () => {
  const collector = new TranslationCollector();
  collector.observe(said(EVENT.TranslationSubtitleEnd, { text: 'kept' }));
  collector.observe(said(EVENT.SessionFinished));
  collector.observe(said(EVENT.TranslationSubtitleEnd, { text: 'late' }));
  collector.observe(said(EVENT.SessionFailed, { response_meta: meta({ Message: 'late' }) }));
  assert.deepEqual({ text: collector.text, outcome: collector.outcome }, { text: 'kept', outcome: { state: 'finished' } });
});

test('SessionFailed ends the session with the upstream message and status', () => {
  const collector = new TranslationCollector();
  collector.observe(said(EVENT.SessionFailed, { response_meta: meta({ StatusCode: 45_000_001, Message: 'invalid_access_key' }) }));
  assert.deepEqual(collector.outcome, { state: 'failed', event: 153, statusCode: 45_000_001, message: 'invalid_access_key' });
});

test('a failure or cancellation without a message is still described', () => {
  const failed = new TranslationCollector();
  failed.observe(said(EVENT.SessionFailed, { response_meta: meta({ StatusCode: 55_000_000 }) }));
  assert.deepEqual(failed.outcome, { state: 'failed', event: 153, statusCode: 55_000_000, message: 'session failed (status 55000000)' });
  const canceled = new TranslationCollector();
  canceled.observe(said(EVENT.SessionCanceled));
  assert.deepEqual(canceled.outcome, { state: 'failed', event: 151, statusCode: 0, message: 'session canceled' });
});

test('engine and internal errors are transient; auth and quota ones are not', () => {
  assert.equal(isTransientFailure('Engine:1022 Model inference error'), true);
  assert.equal(isTransientFailure('ServerInternalError: try later'), true);
  assert.equal(isTransientFailure('invalid_app_key'), false);
  assert.equal(isTransientFailure('quota exceeded'), false);
});
