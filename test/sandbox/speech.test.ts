import assert from 'node:assert/strict';
import { after, before, beforeEach, test } from 'node:test';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.js';
import { addFault, clearSandbox, postJson, readUntilCut } from './sandbox-client.js';

let sandbox: Sandbox;
before(async () => {
  sandbox = await startSandbox({ port: 0 });
});
after(() => sandbox.close());
beforeEach(() => clearSandbox(sandbox.url));

const KEY = { 'x-api-key': 'volc-key', 'x-api-resource-id': 'seed-tts-2.0', 'content-type': 'application/json' };
const WITH_USAGE = { ...KEY, 'x-control-require-usage-tokens-return': 'text_words' };
const ttsUrl = () => `${sandbox.url}/api/v3/tts/unidirectional`;
const speak = (text: string, extra: object = {}) => ({ user: { uid: 'u1' }, req_params: { text, speaker: 'zh_female_vv_uranus_bigtts', ...extra } });

async function synthesize(body: unknown, headers: Record<string, string> = WITH_USAGE) {
  const res = await postJson(ttsUrl(), body, headers);
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    objects: text
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line)),
  };
}

test('the final object counts every code point of the text, punctuation and non-ASCII included', async () => {
  const text = '你好，世界！Hello, world. 🎉'; // 6 + 13 + 2 code points (the emoji is one, two UTF-16 units)
  const { status, headers, objects } = await synthesize(speak(text));
  assert.equal(status, 200);
  assert.equal(headers.get('content-type'), 'application/json');
  assert.equal(headers.get('transfer-encoding'), 'chunked');
  assert.deepEqual(objects.at(-1), { code: 20000000, message: 'ok', data: null, usage: { text_words: 21 } });
});

test('context_texts in additions are never counted, whether additions is a JSON string or an object', async () => {
  const additions = { context_texts: ['你可以用特别欢快的语气说话吗？'], disable_markdown_filter: true };
  const asString = await synthesize(speak('Hi.', { additions: JSON.stringify(additions) }));
  const asObject = await synthesize(speak('Hi.', { additions }));
  assert.deepEqual([asString.objects.at(-1).usage, asObject.objects.at(-1).usage], [{ text_words: 3 }, { text_words: 3 }]);
});

test('usage is sent only when the X-Control-Require-Usage-Tokens-Return header is present', async () => {
  const { objects } = await synthesize(speak('你好。'), KEY);
  assert.deepEqual(objects.at(-1), { code: 20000000, message: 'ok', data: null });
});

test('each sentence gets deterministic mp3-looking audio; without enable_subtitle there are no sentence objects', async () => {
  const body = speak('First one. Second one!');
  const first = await synthesize(body);
  const again = await synthesize(body);
  assert.deepEqual(again.objects, first.objects);
  const audio = first.objects.slice(0, -1);
  assert.ok(audio.every((o) => o.code === 0 && o.message === '' && typeof o.data === 'string' && !('sentence' in o)));
  const bytes = Buffer.concat(audio.map((o) => Buffer.from(o.data, 'base64')));
  assert.equal(bytes.subarray(0, 3).toString('latin1'), 'ID3');
  // 10 bytes of ID3 tag, then per sentence 160 + 24 per code point: "First one." and "Second one!"
  assert.equal(bytes.length, 10 + (160 + 24 * 10) + (160 + 24 * 11));
});

test('with enable_subtitle each sentence is followed by its words, timed 0.2 s per code point from the start', async () => {
  const { objects } = await synthesize(speak('Hi there. 你好！', { audio_params: { format: 'mp3', sample_rate: 24000, enable_subtitle: true } }));
  const sentences = objects.filter((o) => o.sentence !== undefined);
  assert.deepEqual(sentences, [
    {
      code: 0,
      message: '',
      data: null,
      sentence: {
        text: 'Hi there.',
        words: [
          { word: 'Hi', startTime: 0, endTime: 0.4, confidence: 0.9 },
          { word: 'there', startTime: 0.6, endTime: 1.6, confidence: 0.9 },
        ],
      },
    },
    {
      code: 0,
      message: '',
      data: null,
      sentence: {
        text: '你好！',
        words: [
          { word: '你', startTime: 2, endTime: 2.2, confidence: 0.9 },
          { word: '好', startTime: 2.2, endTime: 2.4, confidence: 0.9 },
        ],
      },
    },
  ]);
  // audio of a sentence (10 + 160 + 24 × 9 bytes: one object) comes before its subtitle
  const kinds = objects.map((o) => (o.sentence ? 'sentence' : o.code === 0 ? 'audio' : 'end'));
  assert.deepEqual(kinds, ['audio', 'sentence', 'audio', 'sentence', 'end']);
});

test('objects are written as they are made: the first line arrives before the last is written', async () => {
  await addFault(sandbox.url, { kind: 'speech', chunk_delay_ms: 100 });
  const res = await postJson(ttsUrl(), speak('One. Two. Three.'), WITH_USAGE);
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const first = new TextDecoder().decode((await reader.read()).value);
  assert.deepEqual(
    first
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l).code),
    [0],
  );
  let rest = '';
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) rest += new TextDecoder().decode(chunk.value);
  assert.deepEqual(JSON.parse(rest.trim().split('\n').at(-1) as string).usage, { text_words: 16 });
});

test('drop_after_chunks cuts the answer after that many objects', async () => {
  await addFault(sandbox.url, { kind: 'speech', drop_after_chunks: 2 });
  const res = await postJson(ttsUrl(), speak('One. Two. Three.'), WITH_USAGE);
  const { text, cut } = await readUntilCut(res);
  assert.equal(cut, true);
  assert.equal(text.split('\n').filter((l) => l !== '').length, 2);
});

test('credentials: a key, or an app id with an access key, and always a resource id; otherwise 401', async () => {
  const oldConsole = { 'x-api-app-id': '123', 'x-api-access-key': 'token', 'x-api-resource-id': 'seed-tts-1.0', 'content-type': 'application/json' };
  const statuses = [];
  for (const headers of [KEY, oldConsole]) statuses.push((await synthesize(speak('Hi.'), headers)).status);
  assert.deepEqual(statuses, [200, 200]);
  const noResource = await synthesize(speak('Hi.'), { 'x-api-key': 'k', 'content-type': 'application/json' });
  assert.deepEqual([noResource.status, noResource.objects], [401, [{ code: 45000000, message: 'X-Api-Resource-Id: header is required' }]]);
  const appIdOnly = await synthesize(speak('Hi.'), { 'x-api-app-id': '123', 'x-api-resource-id': 'r', 'content-type': 'application/json' });
  assert.deepEqual([appIdOnly.status, appIdOnly.objects[0].code], [401, 45000000]);
});

test('a request without text or speaker is refused with 400 and code 45000001', async () => {
  const noText = await synthesize({ req_params: { speaker: 's' } });
  const noSpeaker = await synthesize({ req_params: { text: 'hi' } });
  assert.deepEqual(
    [noText.status, noText.objects, noSpeaker.status, noSpeaker.objects],
    [
      400,
      [{ code: 45000001, message: 'req_params.text: required, a non-empty string' }],
      400,
      [{ code: 45000001, message: 'req_params.speaker: required, a non-empty string' }],
    ],
  );
});

test('a status fault answers in the speech error shape', async () => {
  await addFault(sandbox.url, { kind: 'speech', status: 503 });
  const { status, objects } = await synthesize(speak('Hi.'));
  assert.deepEqual([status, objects], [503, [{ code: 55000000, message: 'sandbox fault: status 503' }]]);
});
