// POST /v1/audio/translations end to end: a WAV upload to translated text or translated speech.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { makeWav } from '../helpers/wav.js';

// sandbox-ast: input 3 micros a token, output 12 (DESIGN section 9).
const bill = (usage: { input_token: number; output_token: number }) => usage.input_token * 3 + usage.output_token * 12;

describe('speech translation', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway({ limits: { upload_limit_bytes: 200_000 } });
  });
  after(() => gw.close());
  beforeEach(async () => {
    await gw.sandboxControl('DELETE', '/__sandbox/faults');
    await gw.sandboxControl('DELETE', '/__sandbox/requests');
  });

  const post = async (key: string, fields: Record<string, string | Buffer>) => {
    const form = new FormData();
    for (const [name, value] of Object.entries(fields)) {
      if (Buffer.isBuffer(value)) form.append(name, new Blob([new Uint8Array(value)], { type: 'audio/wav' }), 'speech.wav');
      else form.append(name, value);
    }
    return fetch(`${gw.url}/v1/audio/translations`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
  };

  test('s2t with the official openai client answers text and source_text, billed on the upstream tokens', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    const client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const result = (await client.audio.translations.create({ model: 'sandbox-ast', file: await toFile(makeWav({ ms: 1_500 }), 'speech.wav') })) as { text: string; source_text?: string };
    assert.deepEqual(result, { text: '[en] translated speech of 1500 ms', source_text: 'source speech of 1500 ms' });
    const usage = (await gw.admin('GET', `/admin/accounts/${accountId}/usage`)).body.data[0];
    // 1500 ms of audio: ceil(1500 / 40) input tokens; six words of translation.
    assert.deepEqual(usage.units, { input_token: 38, output_token: 6 });
    assert.equal((await gw.settled(accountId)).balance_micros, 1_000_000 - bill({ input_token: 38, output_token: 6 }));
  });

  test('the languages and voice go upstream; the caller key does not', async () => {
    const { key } = await gw.account();
    const res = await post(key, { model: 'sandbox-ast', file: makeWav({ ms: 200 }), source_language: 'zh', target_language: 'ja' });
    assert.deepEqual(await res.json(), { text: '[ja] translated speech of 200 ms', source_text: 'source speech of 200 ms' });
    const [sent] = (await gw.sandboxControl('GET', '/__sandbox/requests')).data;
    assert.equal(sent.kind, 'ast');
    assert.deepEqual({ source: sent.body.request.source_language, target: sent.body.request.target_language, mode: sent.body.request.mode }, { source: 'zh', target: 'ja', mode: 's2t' });
    assert.equal(sent.headers['x-api-access-key'], 'sk-sandbox');
    assert.ok(!JSON.stringify(sent).includes(key));
  });

  test('s2s streams translated speech as audio/ogg', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    const res = await post(key, { model: 'sandbox-ast', mode: 's2s', voice: 'warm', file: makeWav({ ms: 1_000 }) });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'audio/ogg');
    const audio = Buffer.from(await res.arrayBuffer());
    assert.equal(audio.subarray(0, 4).toString('ascii'), 'OggS');
    assert.ok(audio.includes(Buffer.from('OpusHead')));
    assert.equal((await gw.settled(accountId)).balance_micros, 1_000_000 - bill({ input_token: 25, output_token: 6 }));
  });

  for (const [property, wav, message] of [
    ['sample rate', makeWav({ sampleRate: 44_100, ms: 100 }), 'file: sample rate is 44100 Hz; expected 16000 Hz (16 kHz, mono, 16-bit PCM WAV)'],
    ['channels', makeWav({ channels: 2, ms: 100 }), 'file: 2 channels; expected mono'],
    ['sample size', makeWav({ bits: 8, ms: 100 }), 'file: 8-bit samples; expected 16-bit'],
    ['format', Buffer.from('ID3 this is an mp3, not a wav file at all'), 'file: not a RIFF/WAVE file'],
  ] as const) {
    test(`a WAV with the wrong ${property} is 400 saying so, with nothing charged`, async () => {
      const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
      const res = await post(key, { model: 'sandbox-ast', file: wav });
      assert.deepEqual({ status: res.status, body: await res.json() }, { status: 400, body: { error: message, type: 'invalid_request_error' } });
      assert.deepEqual(await gw.balance(accountId), { ...(await gw.balance(accountId)), balance_micros: 1_000_000, held_micros: 0 });
      assert.equal((await gw.sandboxControl('GET', '/__sandbox/requests')).data.length, 0);
    });
  }

  test('a missing file is 400 naming it', async () => {
    const { key } = await gw.account();
    const res = await post(key, { model: 'sandbox-ast' });
    assert.deepEqual(await res.json(), { error: 'file field is required', type: 'invalid_request_error' });
  });

  test('a missing model is 400 model field is required', async () => {
    const { key } = await gw.account();
    const res = await post(key, { file: makeWav({ ms: 100 }) });
    assert.deepEqual({ status: res.status, body: await res.json() }, { status: 400, body: { error: 'model field is required', type: 'invalid_request_error' } });
  });

  test('an unknown mode is 400 naming the allowed values', async () => {
    const { key } = await gw.account();
    const res = await post(key, { model: 'sandbox-ast', mode: 's2x', file: makeWav({ ms: 100 }) });
    assert.deepEqual(await res.json(), { error: 'mode: must be one of "s2t", "s2s"', type: 'invalid_request_error' });
  });

  test('an upload past the configured size is refused with 413', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    const res = await post(key, { model: 'sandbox-ast', file: makeWav({ ms: 10_000 }) });
    assert.equal(res.status, 413);
    assert.equal(((await res.json()) as any).type, 'invalid_request_error');
    assert.equal((await gw.balance(accountId)).balance_micros, 1_000_000);
  });

  test('an upstream failure is 502 and the hold is released', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'ast', task_outcome: 'failed', times: 1 });
    const res = await post(key, { model: 'sandbox-ast', file: makeWav({ ms: 300 }) });
    assert.deepEqual({ status: res.status, body: await res.json() }, { status: 502, body: { error: 'upstream provider error', type: 'server_error' } });
    assert.equal((await gw.settled(accountId)).balance_micros, 1_000_000);
  });
});
