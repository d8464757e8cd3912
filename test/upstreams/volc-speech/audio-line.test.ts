// An audio line of a speech stream is recognised on its bytes; every other shape is left to the parse.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AUDIO_LINE, audioOf, isAudioLine } from '../../../src/upstreams/volc-speech/audio-line.js';

const AUDIO = '{"code":0,"message":"","data":"SUQzBAAAAAAAAP/zZKZDsgejIbYSBzw5fmQa6j2LoXukgl83eBJdKjD4=="}';

/** Whether the line is recognised when it stands alone in its buffer. */
const recognised = (line: string) => isAudioLine(Buffer.from(line), 0, Buffer.byteLength(line));

test('an audio line as the upstream writes it is recognised, and reads as its parse does', () => {
  assert.equal(recognised(AUDIO), true);
  const parsed = JSON.parse(AUDIO);
  assert.deepEqual({ code: parsed.code, message: parsed.message }, AUDIO_LINE);
});

test('an audio line is recognised where it sits among other lines of a chunk', () => {
  const before = '{"code":0,"message":"","data":null,"sentence":{"text":"x"}}\n';
  const chunk = Buffer.from(`${before}${AUDIO}\n${AUDIO.slice(0, 20)}`);
  const start = Buffer.byteLength(before);
  assert.equal(isAudioLine(chunk, start, start + AUDIO.length), true);
  assert.equal(isAudioLine(chunk, 0, start - 1), false);
  assert.equal(isAudioLine(chunk, start + AUDIO.length + 1, chunk.length), false, 'a line cut short');
});

test('escapes inside the audio do not hide its closing quote', () => {
  assert.equal(recognised('{"code":0,"message":"","data":"SU\\u0051z\\\\"}'), true, 'an escaped backslash before the quote');
  assert.equal(JSON.parse('{"code":0,"message":"","data":"SU\\u0051z\\\\"}').code, 0);
});

test('every other shape is left to the parse', () => {
  for (const line of [
    '{"code":20000000,"message":"ok","data":null,"usage":{"text_words":113}}',
    '{"code":0,"message":"","data":null,"sentence":{"text":"其他人。"}}',
    '{"code":45000001,"message":"bad request","data":""}',
    '{"code":0,"message":"","data":"SUQz","usage":{"text_words":1}}',
    '{"code": 0,"message":"","data":"SUQz"}',
    '{"code":0,"message":"","data":"SU\\"Qz"}',
    '{"code":0,"message":"","data":"SUQz\\"}',
    '{"code":0,"message":"","data":"SUQz"}\r',
    '{"code":0,"message":"","data":"',
    '{"code":0,"message":"","data":"}',
    '',
  ]) {
    assert.equal(recognised(line), false, line);
  }
});

test('the audio of an audio line is read from its bytes; a line with an escape in it is left to the parse', () => {
  const bytes = Buffer.from(AUDIO);
  assert.deepEqual(audioOf(bytes, 0, bytes.length), Buffer.from(JSON.parse(AUDIO).data, 'base64'));
  const escaped = Buffer.from('{"code":0,"message":"","data":"SUQz\\/BAAA"}');
  assert.equal(audioOf(escaped, 0, escaped.length), undefined);
  const empty = Buffer.from('{"code":0,"message":"","data":""}');
  assert.equal(audioOf(empty, 0, empty.length), undefined);
});
