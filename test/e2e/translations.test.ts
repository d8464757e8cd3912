// POST /v1/audio/translations end to end: a WAV upload to translated text or translated speech.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import { sandboxCatalogue } from '../../src/config/sandbox-catalogue.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { postUpload, wavPart } from '../helpers/uploads.js';
import { makeWav } from '../helpers/wav.js';

// sandbox-ast: input 3 micros a token, output 12 (DESIGN section 9).
const bill = (usage: { input_token: number; output_token: number }) => usage.input_token * 3 + usage.output_token * 12;

describe('speech translation', () => {
  let gw: TestGateway;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'tollroute-translations-'));
  // Uploads wait here while they are checked and translated; none may outlive its request.
  const spooled = () =>
    readdirSync(path.join(dataDir, 'uploads'), { withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => e.name);
  before(async () => {
    const { models } = sandboxCatalogue('http://unused');
    gw = await startTestGateway({
      data_dir: dataDir,
      limits: { upload_limit_bytes: 200_000 },
      // A second of this one holds 75 000 micros: 25 input tokens at 3 000 micros each.
      models: {
        ...models,
        'sandbox-ast-pricey': { type: 'ast', channel: 'sandbox-ast', upstream_model: 'sandbox-ast', price: { input_token: 3_000_000_000 } },
      },
    });
  });
  after(async () => {
    await gw.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  beforeEach(async () => {
    await gw.sandboxControl('DELETE', '/__sandbox/faults');
    await gw.sandboxControl('DELETE', '/__sandbox/requests');
  });
  afterEach(async () => {
    // Settled answers come back before the handler's clean-up has run: give it a moment.
    const deadline = Date.now() + 2_000;
    while (spooled().length > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(spooled(), [], 'an upload was left on disk');
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
    const result = (await client.audio.translations.create({ model: 'sandbox-ast', file: await toFile(makeWav({ ms: 1_500 }), 'speech.wav') })) as {
      text: string;
      source_text?: string;
    };
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
    assert.deepEqual(
      { source: sent.body.request.source_language, target: sent.body.request.target_language, mode: sent.body.request.mode },
      { source: 'zh', target: 'ja', mode: 's2t' },
    );
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

  test('an s2s caller who leaves during the speech pays for the speech delivered, less than the completed call', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    const file = makeWav({ ms: 3_000 });
    const completed = await post(key, { model: 'sandbox-ast', mode: 's2s', file });
    await completed.arrayBuffer();
    const afterCompleted = (await gw.settled(accountId)).balance_micros;
    const completedMicros = 1_000_000 - afterCompleted;

    // a page of speech a second, 150 ms apart: the caller leaves once the first second has come
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'ast', chunk_delay_ms: 150, times: 1 });
    const controller = new AbortController();
    const form = new FormData();
    form.append('model', 'sandbox-ast');
    form.append('mode', 's2s');
    form.append('file', new Blob([new Uint8Array(file)], { type: 'audio/wav' }), 'speech.wav');
    const res = await fetch(`${gw.url}/v1/audio/translations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: form,
      signal: controller.signal,
    });
    const reader = res.body!.getReader();
    let bytes = 0;
    while (bytes < 1_000) bytes += (await reader.read()).value?.length ?? Number.POSITIVE_INFINITY;
    controller.abort();

    const leftMicros = afterCompleted - (await gw.settled(accountId)).balance_micros;
    assert.ok(leftMicros > 0 && leftMicros < completedMicros, `left paid ${leftMicros}, the completed call ${completedMicros}`);
  });

  test('an s2s caller who gives up on a hung upstream pays nothing: the hold is released in full', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'ast', hang: true, times: 1 });
    const form = new FormData();
    form.append('model', 'sandbox-ast');
    form.append('mode', 's2s');
    form.append('file', new Blob([new Uint8Array(makeWav({ ms: 1_000 }))], { type: 'audio/wav' }), 'speech.wav');
    const signal = AbortSignal.timeout(500);
    await assert.rejects(fetch(`${gw.url}/v1/audio/translations`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form, signal }));
    assert.equal((await gw.settled(accountId)).balance_micros, 1_000_000);
    assert.deepEqual((await gw.admin('GET', `/admin/accounts/${accountId}/usage`)).body.data, []);
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

  test('a file sent as a text field is 400 saying it must be a file', async () => {
    const { key } = await gw.account();
    const res = await post(key, { model: 'sandbox-ast', file: 'speech.wav' });
    assert.deepEqual(
      { status: res.status, body: await res.json() },
      { status: 400, body: { error: 'file: must be a file (a part with a filename), not a text field', type: 'invalid_request_error' } },
    );
  });

  test('a missing model is 400 model field is required', async () => {
    const { key } = await gw.account();
    const res = await post(key, { file: makeWav({ ms: 100 }) });
    assert.deepEqual(
      { status: res.status, body: await res.json() },
      { status: 400, body: { error: 'model field is required', type: 'invalid_request_error' } },
    );
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
  describe('before a byte of the upload is read', () => {
    const upload = (key: string, parts = [{ name: 'model', value: 'sandbox-ast' }, wavPart(2_800)]) =>
      postUpload(`${gw.url}/v1/audio/translations`, parts, { authorization: `Bearer ${key}` });

    test('a zero-balance key is refused with 402 while its 90 MB upload is still being sent', async () => {
      const { accountId, key } = await gw.account({ creditMicros: 0 });
      const res = await upload(key);
      assert.deepEqual(
        { status: res.status, body: res.body },
        {
          status: 402,
          body: { error: 'insufficient balance -- please top up or upgrade the service plan', type: 'billing_error' },
        },
      );
      assert.ok(res.length > 89_000_000 && res.sentBeforeAnswer < res.length / 2, `sent ${res.sentBeforeAnswer} of ${res.length} bytes before the answer`);
      assert.deepEqual((await gw.admin('GET', `/admin/accounts/${accountId}/ledger`)).body.data, []);
      assert.equal((await gw.sandboxControl('GET', '/__sandbox/requests')).data.length, 0);
    });

    test('a key past its rate limit is refused with 429 before the body, and a call counts once against the limit', async () => {
      const { key } = await gw.account({ creditMicros: 1_000_000, rpm: 2 });
      // Two calls fit a limit of 2 a minute: the route's early check and the pipeline do not both take one.
      for (let i = 0; i < 2; i++) assert.equal((await post(key, { model: 'sandbox-ast', file: makeWav({ ms: 100 }) })).status, 200);
      const res = await upload(key);
      assert.deepEqual({ status: res.status, type: res.body.type }, { status: 429, type: 'rate_limit_error' });
      assert.ok(res.sentBeforeAnswer < res.length / 2, `sent ${res.sentBeforeAnswer} of ${res.length} bytes before the answer`);
    });

    test('a model named before the file must have one second of its audio covered before the file is read', async () => {
      // Covers a second of sandbox-ast (195 micros), not of sandbox-ast-pricey (75 000).
      const { accountId, key } = await gw.account({ creditMicros: 10_000 });
      const res = await upload(key, [{ name: 'model', value: 'sandbox-ast-pricey' }, wavPart(2_800)]);
      assert.deepEqual({ status: res.status, type: res.body.type }, { status: 402, type: 'billing_error' });
      assert.ok(res.sentBeforeAnswer < res.length / 2, `sent ${res.sentBeforeAnswer} of ${res.length} bytes before the answer`);
      assert.deepEqual(await gw.balance(accountId), { ...(await gw.balance(accountId)), balance_micros: 10_000, held_micros: 0 });
    });

    test('an unknown model named before the file is 400 before the file is read', async () => {
      const { key } = await gw.account();
      const res = await upload(key, [{ name: 'model', value: 'no-such-ast' }, wavPart(2_800)]);
      assert.deepEqual({ status: res.status, body: res.body }, { status: 400, body: { error: 'unknown model: no-such-ast', type: 'invalid_request_error' } });
      assert.ok(res.sentBeforeAnswer < res.length / 2, `sent ${res.sentBeforeAnswer} of ${res.length} bytes before the answer`);
    });

    test('a balance that covers a second but not the whole file is refused with 402 once the file is in, with nothing held', async () => {
      // 6 s of audio holds 6 x 195 = 1 170 micros.
      const { accountId, key } = await gw.account({ creditMicros: 1_000 });
      const res = await post(key, { model: 'sandbox-ast', file: makeWav({ ms: 6_000 }) });
      assert.deepEqual(
        { status: res.status, body: await res.json() },
        {
          status: 402,
          body: {
            error:
              'insufficient balance -- please top up or upgrade the service plan: this call needs to hold 1170 micros; the account has 1000 micros available',
            type: 'billing_error',
          },
        },
      );
      assert.deepEqual(await gw.balance(accountId), { ...(await gw.balance(accountId)), balance_micros: 1_000, held_micros: 0 });
    });
  });

  test('the upstream receives every sample of the file, read from disk, and none of its header', async () => {
    const { key } = await gw.account();
    const wav = makeWav({ ms: 3_000 });
    assert.equal((await post(key, { model: 'sandbox-ast', file: wav })).status, 200);
    const [sent] = (await gw.sandboxControl('GET', '/__sandbox/requests')).data;
    assert.equal(sent.kind, 'ast');
    assert.equal(sent.body.audio_bytes, wav.length - 44);
  });
});
