// What the speech a translated-speech (s2s) stream delivered covers, for a caller who leaves before its usage.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { oggOpusPages } from '../../../src/sandbox/ogg.js';
import { TranslationMeter } from '../../../src/upstreams/volc-ast/stream-meter.js';

const ESTIMATE = { input_token: 75, output_token: 30 };
const SOURCE = { durationMs: 2_500, inputTokensPerSecond: 25 };
const pages = oggOpusPages({ durationMs: 2_500, voice: 'v', targetLanguage: 'en' });

test('before any audio, and with only the Ogg header pages, nothing is covered', () => {
  const meter = new TranslationMeter(ESTIMATE, SOURCE);
  assert.deepEqual(meter.audioCovered(), { kind: 'none' });
  meter.observeAudio(pages[0]!);
  meter.observeAudio(pages[1]!);
  assert.deepEqual(meter.audioCovered(), { kind: 'none' });
});

test('the speech sent covers as much of the source, at the hold’s input rate, and that share of the translated words', () => {
  const meter = new TranslationMeter(ESTIMATE, SOURCE);
  meter.observeTranslation('one two three four five');
  for (const page of pages.slice(0, 3)) meter.observeAudio(page);
  // 1 000 ms of 2 500: 25 input tokens, and 2 of the 5 words
  assert.deepEqual(meter.audioCovered(), { kind: 'measured', units: { input_token: 25, output_token: 2 } });
});

test('all the speech covers the whole source and every translated word, never more', () => {
  const meter = new TranslationMeter(ESTIMATE, SOURCE);
  meter.observeTranslation('one two three four five');
  for (const page of pages) meter.observeAudio(page);
  assert.deepEqual(meter.audioCovered(), { kind: 'measured', units: { input_token: 63, output_token: 5 } });
});

test('speech that is not Ogg, whose length cannot be read, covers the whole source, not the estimate', () => {
  const meter = new TranslationMeter(ESTIMATE, SOURCE);
  meter.observeTranslation('one two');
  meter.observeAudio(Buffer.from('not an Ogg page'));
  assert.deepEqual(meter.audioCovered(), { kind: 'measured', units: { input_token: 63, output_token: 2 } });
});

test('a finished session reports its own usage', () => {
  const meter = new TranslationMeter(ESTIMATE, SOURCE);
  meter.finish({ input_token: 63, output_token: 7 });
  assert.deepEqual({ completed: meter.completed, reported: meter.reported() }, { completed: true, reported: { input_token: 63, output_token: 7 } });
});
