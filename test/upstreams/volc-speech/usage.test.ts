// What the audio a speech stream delivered covers, for a caller who leaves before its end line's usage.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SpeechStreamMeter } from '../../../src/upstreams/volc-speech/usage.js';

const TEXT_CHARACTERS = 24;

test('before any audio nothing is covered, the status and a line without audio included', () => {
  const meter = new SpeechStreamMeter(TEXT_CHARACTERS);
  assert.deepEqual(meter.audioCovered(), { kind: 'none' });
  meter.observe({ code: 0, message: '', data: '' });
  meter.observeAudioLine(false);
  assert.deepEqual(meter.audioCovered(), { kind: 'none' });
});

test('audio without subtitles cannot be measured', () => {
  const meter = new SpeechStreamMeter(TEXT_CHARACTERS);
  meter.observeAudioLine(true);
  assert.deepEqual(meter.audioCovered(), { kind: 'unmeasured' });
});

test('with subtitles, the audio covers the characters of the sentences synthesised, never more than the text', () => {
  const meter = new SpeechStreamMeter(TEXT_CHARACTERS);
  meter.observe({ code: 0, message: '', data: 'AAAA' });
  meter.observe({ code: 0, message: '', data: null, sentence: { text: 'First one.' } });
  assert.deepEqual(meter.audioCovered(), { kind: 'measured', units: { character: 10 } });
  meter.observe({ code: 0, message: '', data: null, sentence: { text: 'A second, longer sentence.' } });
  assert.deepEqual(meter.audioCovered(), { kind: 'measured', units: { character: TEXT_CHARACTERS } });
});
