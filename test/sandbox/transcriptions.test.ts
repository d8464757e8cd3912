// The sandbox's OpenAI audio transcriptions: a transcript of the audio's length in every answer
// format, the SSE stream, Azure's deployment path, refusals in OpenAI's shape, faults by kind.
import assert from 'node:assert/strict';
import { after, before, beforeEach, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import { oggOpusPages } from '../../src/sandbox/ogg.js';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.js';
import { audioMs } from '../../src/sandbox/transcriptions.js';
import { makeWav } from '../helpers/wav.js';
import { addFault, clearSandbox, loggedRequests, parseSse } from './sandbox-client.js';

let sandbox: Sandbox;
before(async () => {
  sandbox = await startSandbox({ port: 0 });
});
after(() => sandbox.close());
beforeEach(() => clearSandbox(sandbox.url));

const client = () => new OpenAI({ apiKey: 'sk-test', baseURL: `${sandbox.url}/v1`, maxRetries: 0 });
const wav = (ms: number) => toFile(makeWav({ ms }), 'speech.wav');

async function postForm(path: string, fields: Record<string, string>, file: Buffer, headers: Record<string, string> = { authorization: 'Bearer sk-test' }) {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  form.append('file', new Blob([new Uint8Array(file)]), 'upload.bin');
  const res = await fetch(`${sandbox.url}${path}`, { method: 'POST', headers, body: form });
  return { status: res.status, contentType: res.headers.get('content-type'), text: await res.text() };
}

test('json: the transcript of the audio’s length and whisper’s duration usage', async () => {
  const answer = await client().audio.transcriptions.create({ model: 'whisper-1', file: await wav(1_500) });
  assert.deepEqual(answer, { text: 'transcribed speech of 1500 ms', usage: { type: 'duration', seconds: 2 } });
});

test('a model named like gpt-4o-transcribe reports tokens', async () => {
  const answer = await client().audio.transcriptions.create({ model: 'gpt-4o-transcribe', file: await wav(2_000) });
  assert.deepEqual((answer as any).usage, { type: 'tokens', input_tokens: 34, output_tokens: 5, total_tokens: 39 });
});

test('text, srt and vtt are plain text with one cue spanning the audio', async () => {
  const file = await wav(61_250);
  const text = await client().audio.transcriptions.create({ model: 'whisper-1', file, response_format: 'text' });
  assert.equal(text, 'transcribed speech of 61250 ms\n');
  const srt = await client().audio.transcriptions.create({ model: 'whisper-1', file: await wav(61_250), response_format: 'srt' });
  assert.equal(srt, '1\n00:00:00,000 --> 00:01:01,250\ntranscribed speech of 61250 ms\n\n');
  const vtt = await client().audio.transcriptions.create({ model: 'whisper-1', file: await wav(61_250), response_format: 'vtt' });
  assert.equal(vtt, 'WEBVTT\n\n00:00:00.000 --> 00:01:01.250\ntranscribed speech of 61250 ms\n\n');
});

test('verbose_json carries the duration, segments by default, and words when asked', async () => {
  const plain = await client().audio.transcriptions.create({ model: 'whisper-1', file: await wav(1_000), response_format: 'verbose_json' });
  assert.deepEqual([plain.duration, plain.segments?.length, plain.words, (plain as any).usage], [1, 1, undefined, undefined]);
  const words = await client().audio.transcriptions.create({
    model: 'whisper-1',
    file: await wav(1_000),
    response_format: 'verbose_json',
    timestamp_granularities: ['word'],
  });
  assert.equal(words.segments, undefined);
  assert.deepEqual(words.words?.at(-1), { word: 'ms', start: 0.8, end: 1 });
});

test('stream=true sends a delta a word, then done with the usage', async () => {
  const { contentType, text } = await postForm('/v1/audio/transcriptions', { model: 'whisper-1', stream: 'true' }, makeWav({ ms: 700 }));
  assert.equal(contentType, 'text/event-stream');
  const events = parseSse(text);
  assert.deepEqual(
    events.map((e) => e.delta ?? e.type),
    ['transcribed', ' speech', ' of', ' 700', ' ms', 'transcript.text.done'],
  );
  assert.deepEqual(events.at(-1), { type: 'transcript.text.done', text: 'transcribed speech of 700 ms', usage: { type: 'duration', seconds: 1 } });
});

test('an error_after_chunks fault ends the stream with an error event and no done', async () => {
  await addFault(sandbox.url, { kind: 'transcriptions', error_after_chunks: 2 });
  const events = parseSse((await postForm('/v1/audio/transcriptions', { model: 'whisper-1', stream: 'true' }, makeWav({ ms: 700 }))).text);
  assert.equal(events.length, 3);
  assert.deepEqual([events[2].type, events[2].error.type], ['error', 'server_error']);
});

test('a file that is not audio is 400 in OpenAI’s words', async () => {
  const { status, text } = await postForm('/v1/audio/transcriptions', { model: 'whisper-1' }, Buffer.from('not audio at all'));
  assert.equal(status, 400);
  assert.match(JSON.parse(text).error.message, /^Invalid file format/);
});

test('Azure’s deployment path takes the model from the deployment and the key from api-key', async () => {
  const path = '/openai/deployments/whisper-prod/audio/transcriptions?api-version=2024-10-21';
  const answer = await postForm(path, {}, makeWav({ ms: 300 }), { 'api-key': 'sk-azure' });
  assert.deepEqual([answer.status, JSON.parse(answer.text).text], [200, 'transcribed speech of 300 ms']);
  const refused = await postForm(path, {}, makeWav({ ms: 300 }), {});
  assert.equal(refused.status, 401);
  const [logged] = await loggedRequests(sandbox.url);
  assert.equal(logged.kind, 'azure');
});

test('the length of audio other than WAV is read from its header', async () => {
  assert.equal(await audioMs(Buffer.concat(oggOpusPages({ durationMs: 2_000, voice: '', targetLanguage: 'en' }))), 2_000);
  assert.equal(await audioMs(makeWav({ sampleRate: 8_000, bits: 8, ms: 4_321 })), 4_321);
  assert.equal(await audioMs(Buffer.from('plain text')), undefined);
});
