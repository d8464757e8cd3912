// Speech synthesis end to end: the native line stream and the OpenAI-compatible audio answer.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import OpenAI from 'openai';
import { request } from 'undici';
import { eventually, startTestGateway, type TestGateway } from '../helpers/gateway.js';

const PRICE_PER_CHARACTER = 100;
const chars = (text: string) => [...text].length;

describe('speech synthesis', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway();
  });
  after(() => gw.close());
  beforeEach(async () => {
    await gw.sandboxControl('DELETE', '/__sandbox/faults');
    await gw.sandboxControl('DELETE', '/__sandbox/requests');
  });

  const speak = (body: unknown, { query = '?model=sandbox-tts', headers = {} }: { query?: string; headers?: Record<string, string> } = {}) =>
    request(`${gw.url}/v1/audio/speech/unidirectional${query}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
  const lines = (text: string) =>
    text
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l));

  test('the native stream is passed through as JSON lines and billed per character of the text', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    const text = '你好，世界！Hello, world.';
    const res = await speak(
      { req_params: { text, speaker: 'zh_female_vv_uranus_bigtts', audio_params: { enable_subtitle: true } } },
      { headers: { authorization: `Bearer ${key}` } },
    );
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'application/json');
    const objects = lines(await res.body.text());
    assert.ok(
      objects.some((o) => typeof o.data === 'string' && o.data.length > 0),
      'audio fragments',
    );
    assert.ok(
      objects.some((o) => o.sentence?.words?.length > 0),
      'subtitles with word timestamps',
    );
    assert.deepEqual(objects.at(-1), { code: 20000000, message: 'ok', data: null, usage: { text_words: chars(text) } });
    assert.equal((await gw.settled(accountId)).balance_micros, 1_000_000 - chars(text) * PRICE_PER_CHARACTER);
  });

  test('context_texts are never billed', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    const text = 'Only this.';
    const res = await speak(
      { req_params: { text, speaker: 's', additions: JSON.stringify({ context_texts: ['say it slowly and warmly please'] }) } },
      { headers: { 'x-api-key': key } },
    );
    await res.body.dump();
    assert.equal((await gw.settled(accountId)).balance_micros, 1_000_000 - chars(text) * PRICE_PER_CHARACTER);
  });

  test('the upstream gets the body as sent with the channel credentials, never the caller key', async () => {
    const { key } = await gw.account();
    const body = { user: { uid: 'u1' }, req_params: { text: 'Hi.', speaker: 'voice-1', audio_params: { format: 'mp3' } } };
    await (await speak(body, { headers: { authorization: `Bearer ${key}`, 'x-api-resource-id': 'sandbox-tts' }, query: '' })).body.dump();
    const [sent] = (await gw.sandboxControl('GET', '/__sandbox/requests')).data;
    assert.deepEqual(sent.body, body);
    assert.equal(sent.path, '/api/v3/tts/unidirectional');
    assert.equal(sent.headers['x-api-resource-id'], 'volc.service_type.10029');
    assert.equal(sent.headers['x-api-app-id'], 'sandbox-app');
    assert.equal(sent.headers['x-api-access-key'], 'sk-sandbox');
    assert.ok(!JSON.stringify(sent).includes(key));
  });

  test('the model query parameter wins over the X-Api-Resource-Id header', async () => {
    const { key } = await gw.account();
    const res = await speak(
      { req_params: { text: 'Hi.', speaker: 's' } },
      { headers: { authorization: `Bearer ${key}`, 'x-api-resource-id': 'no-such-model' } },
    );
    assert.equal(res.statusCode, 200);
    await res.body.dump();
  });

  test('no model in the query or the header is 400 and charges nothing', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000 });
    const res = await speak({ req_params: { text: 'Hi.', speaker: 's' } }, { query: '', headers: { authorization: `Bearer ${key}` } });
    assert.deepEqual(
      { status: res.statusCode, body: await res.body.json() },
      { status: 400, body: { error: 'model field is required', type: 'invalid_request_error' } },
    );
    assert.deepEqual(await gw.balance(accountId), { ...(await gw.balance(accountId)), balance_micros: 1_000, held_micros: 0 });
  });

  test('an empty model query parameter falls back to the header', async () => {
    const { key } = await gw.account();
    const res = await speak(
      { req_params: { text: 'Hi.', speaker: 's' } },
      { query: '?model=', headers: { authorization: `Bearer ${key}`, 'x-api-resource-id': 'sandbox-tts' } },
    );
    assert.equal(res.statusCode, 200);
    await res.body.dump();
  });

  test('a missing req_params.speaker is 400 naming it', async () => {
    const { key } = await gw.account();
    const res = await speak({ req_params: { text: 'Hi.' } }, { headers: { authorization: `Bearer ${key}` } });
    assert.deepEqual(
      { status: res.statusCode, body: await res.body.json() },
      { status: 400, body: { error: 'req_params.speaker field is required', type: 'invalid_request_error' } },
    );
  });

  test('lines arrive as the upstream writes them, not after the whole answer', async () => {
    const { key } = await gw.account();
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'speech', chunk_delay_ms: 150, times: 1 });
    const res = await speak({ req_params: { text: 'One. Two. Three. Four.', speaker: 's' } }, { headers: { authorization: `Bearer ${key}` } });
    const startedAt = Date.now();
    const iterator = res.body[Symbol.asyncIterator]();
    const first = await iterator.next();
    const firstAfterMs = Date.now() - startedAt;
    for (;;) if ((await iterator.next()).done) break;
    const totalMs = Date.now() - startedAt;
    assert.ok(!first.done && String(first.value).includes('"code"'));
    assert.ok(firstAfterMs < totalMs - 300, `first line after ${firstAfterMs} ms, whole answer after ${totalMs} ms`);
  });

  test('a stream the upstream drops after two audio chunks ends with a server-error line and is released', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'speech', drop_after_chunks: 2, times: 1 });
    const text = 'One. Two. Three. Four.';
    const res = await speak({ req_params: { text, speaker: 's' } }, { headers: { authorization: `Bearer ${key}` } });
    const objects = lines(await res.body.text());
    assert.deepEqual(objects.at(-1), { code: 55000000, message: 'upstream provider error', data: null });
    assert.equal((await gw.settled(accountId)).balance_micros, 1_000_000);
  });

  test('an upstream error code mid-stream with no end line is passed on as it came and released', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'speech', error_after_chunks: 2, times: 1 });
    const res = await speak({ req_params: { text: 'One. Two. Three. Four.', speaker: 's' } }, { headers: { authorization: `Bearer ${key}` } });
    const objects = lines(await res.body.text());
    assert.equal(objects.at(-1).code, 55000000);
    assert.equal(objects.filter((o: any) => o.code === 55000000).length, 1, 'one error line, the upstream’s own');
    assert.equal((await gw.settled(accountId)).balance_micros, 1_000_000);
  });

  test('an upstream failure before the first byte is 502 and the hold is released', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'speech', status: 500, times: 1 });
    const res = await speak({ req_params: { text: 'Hi.', speaker: 's' } }, { headers: { authorization: `Bearer ${key}` } });
    assert.deepEqual(
      { status: res.statusCode, body: await res.body.json() },
      { status: 502, body: { error: 'upstream provider error', type: 'server_error' } },
    );
    assert.equal((await gw.settled(accountId)).balance_micros, 1_000_000);
  });

  test('a client that disconnects stops the upstream call and pays the estimate when no usage came', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'speech', chunk_delay_ms: 100, times: 1 });
    const text = 'First sentence. Second sentence. Third sentence. Fourth sentence.';
    const controller = new AbortController();
    const res = await request(`${gw.url}/v1/audio/speech/unidirectional?model=sandbox-tts`, {
      method: 'POST',
      signal: controller.signal,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ req_params: { text, speaker: 's' } }),
    });
    await res.body[Symbol.asyncIterator]().next();
    controller.abort();
    const upstreamCall = await eventually(async () => {
      const [last] = (await gw.sandboxControl('GET', '/__sandbox/requests')).data.slice(-1);
      return last?.aborted && last;
    });
    assert.equal(upstreamCall.aborted, true);
    assert.equal((await gw.settled(accountId)).balance_micros, 1_000_000 - chars(text) * PRICE_PER_CHARACTER);
  });

  test('a client that gives up on a hung upstream pays nothing: the hold is released in full', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'speech', hang: true, times: 1 });
    await assert.rejects(
      request(`${gw.url}/v1/audio/speech?model=sandbox-tts`, {
        method: 'POST',
        signal: AbortSignal.timeout(300),
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: JSON.stringify({ model: 'sandbox-tts', input: 'A text that was never spoken.', voice: 'alloy' }),
      }),
    );
    assert.equal((await gw.settled(accountId)).balance_micros, 1_000_000);
    assert.deepEqual((await gw.admin('GET', `/admin/accounts/${accountId}/usage`)).body.data, []);
  });

  test('a client that leaves after a subtitled sentence pays for the sentences spoken, not the whole text', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'speech', chunk_delay_ms: 100, times: 1 });
    const text = 'First sentence. Second sentence. Third sentence. Fourth sentence.';
    const controller = new AbortController();
    const res = await request(`${gw.url}/v1/audio/speech/unidirectional?model=sandbox-tts`, {
      method: 'POST',
      signal: controller.signal,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ req_params: { text, speaker: 's', audio_params: { enable_subtitle: true } } }),
    });
    res.body.on('error', () => {}); // the abort below errors the body
    let read = '';
    for await (const chunk of res.body) {
      read += chunk;
      if (lines(read.slice(0, read.lastIndexOf('\n') + 1)).some((line) => line.sentence)) break;
    }
    controller.abort();
    const spoken = lines(read.slice(0, read.lastIndexOf('\n') + 1)).filter((line) => line.sentence);
    const characters = spoken.reduce((sum, line) => sum + chars(line.sentence.text), 0);
    assert.ok(characters > 0 && characters < chars(text));
    assert.equal((await gw.settled(accountId)).balance_micros, 1_000_000 - characters * PRICE_PER_CHARACTER);
  });

  test('the OpenAI-compatible endpoint answers the audio bytes and bills the same way', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    const input = 'Speak these words.';
    const client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const response = await client.audio.speech.create({ model: 'sandbox-tts', input, voice: 'alloy', response_format: 'mp3' });
    const audio = Buffer.from(await response.arrayBuffer());
    assert.equal(response.headers.get('content-type'), 'audio/mpeg');
    // The same synthesis through the native endpoint, its fragments decoded by hand.
    const native = lines(
      await (
        await speak(
          { req_params: { text: input, speaker: 'alloy', audio_params: { format: 'mp3', sample_rate: 24000 } } },
          { headers: { authorization: `Bearer ${key}` } },
        )
      ).body.text(),
    );
    const expected = Buffer.concat(native.filter((o) => typeof o.data === 'string' && o.data).map((o) => Buffer.from(o.data, 'base64')));
    assert.equal(audio.subarray(0, 3).toString('latin1'), 'ID3');
    assert.deepEqual(audio, expected);
    assert.equal((await gw.settled(accountId)).balance_micros, 1_000_000 - 2 * chars(input) * PRICE_PER_CHARACTER);
  });

  test('response_format wav gets a WAV header over PCM', async () => {
    const { key } = await gw.account();
    const client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const response = await client.audio.speech.create({ model: 'sandbox-tts', input: 'Hi.', voice: 'alloy', response_format: 'wav' });
    const audio = Buffer.from(await response.arrayBuffer());
    assert.equal(response.headers.get('content-type'), 'audio/wav');
    assert.equal(audio.subarray(0, 4).toString('ascii'), 'RIFF');
    assert.equal(audio.readUInt32LE(24), 24000);
    assert.ok(audio.length > 44);
  });
});
