// POST /v1/audio/transcriptions end to end, through the official openai SDK: every answer format,
// the stream, exact bills per second of audio, the upload limit and the refusals that charge nothing.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import { sandboxCatalogue } from '../../src/config/sandbox-catalogue.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { postUpload, wavPart } from '../helpers/uploads.js';
import { makeWav } from '../helpers/wav.js';

// sandbox-transcribe: 100 micros a second of audio.
const PER_SECOND = 100;
const LIMIT = 25 * 1024 * 1024;

describe('audio transcriptions', () => {
  let gw: TestGateway;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'tollroute-transcriptions-'));
  const spooled = () => {
    try {
      return readdirSync(path.join(dataDir, 'uploads'), { withFileTypes: true })
        .filter((e) => e.isFile())
        .map((e) => e.name);
    } catch {
      return [];
    }
  };
  before(async () => {
    gw = await startTestGateway((sandboxUrl) => {
      const { models } = sandboxCatalogue(sandboxUrl);
      return {
        data_dir: dataDir,
        test_mode: { sandbox_url: sandboxUrl },
        models: {
          ...models,
          // Azure's deployment path: the deployment is the upstream model.
          'sandbox-transcribe-azure': { type: 'transcription', channel: 'sandbox-azure', upstream_model: 'whisper-deployment', price: { second: 100 } },
          // Reports tokens, as OpenAI's gpt-4o-transcribe does: 2.5 micros a token in, 10 out.
          'sandbox-gpt-4o-transcribe': {
            type: 'transcription',
            channel: 'sandbox-openai',
            upstream_model: 'gpt-4o-transcribe',
            price: { input_token: 2_500_000, output_token: 10_000_000 },
          },
        },
      };
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
    const deadline = Date.now() + 2_000;
    while (spooled().length > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(spooled(), [], 'an upload was left on disk');
  });

  const client = (key: string) => new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  const wavFile = (ms: number) => toFile(makeWav({ ms }), 'speech.wav');
  const usageRows = async (accountId: string) => (await gw.admin('GET', `/admin/accounts/${accountId}/usage`)).body.data;
  const post = (key: string, fields: Record<string, string | Buffer>, headers: Record<string, string> = {}) => {
    const form = new FormData();
    for (const [name, value] of Object.entries(fields)) {
      if (Buffer.isBuffer(value)) form.append(name, new Blob([new Uint8Array(value)]), 'upload.bin');
      else form.append(name, value);
    }
    return fetch(`${gw.url}/v1/audio/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, ...headers }, body: form });
  };

  test('json answers the transcript and its usage, billed on the seconds the upstream reports', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    const result = await client(key).audio.transcriptions.create({ file: await wavFile(1_500), model: 'sandbox-transcribe' });
    assert.deepEqual(result, { text: 'transcribed speech of 1500 ms', usage: { type: 'duration', seconds: 2 } });
    assert.deepEqual((await usageRows(accountId))[0].units, { second: 2 });
    assert.equal((await gw.settled(accountId)).balance_micros, 1_000_000 - 2 * PER_SECOND);
  });

  test('the file goes upstream as multipart with its format named, and the caller key does not', async () => {
    const { key } = await gw.account();
    await client(key).audio.transcriptions.create({
      file: await wavFile(500),
      model: 'sandbox-transcribe',
      language: 'en',
      prompt: 'Tolls.',
      temperature: 0.2,
    });
    const [sent] = (await gw.sandboxControl('GET', '/__sandbox/requests')).data;
    assert.deepEqual([sent.kind, sent.path, sent.headers.authorization], ['transcriptions', '/v1/audio/transcriptions', 'Bearer sk-sandbox']);
    for (const text of [
      'name="model"\r\n\r\nsandbox-transcribe',
      'filename="audio.wav"',
      'name="language"\r\n\r\nen',
      'name="prompt"\r\n\r\nTolls.',
      'name="temperature"\r\n\r\n0.2',
    ]) {
      assert.ok(sent.body.includes(text), `${text} in ${sent.body.slice(0, 600)}`);
    }
    assert.ok(!JSON.stringify(sent).includes(key));
  });

  for (const [format, expected] of [
    ['text', 'transcribed speech of 2200 ms\n'],
    ['srt', '1\n00:00:00,000 --> 00:00:02,200\ntranscribed speech of 2200 ms\n\n'],
    ['vtt', 'WEBVTT\n\n00:00:00.000 --> 00:00:02.200\ntranscribed speech of 2200 ms\n\n'],
  ] as const) {
    test(`${format} answers the upstream's text as text/plain, billed on the measured seconds`, async () => {
      const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
      const result = await client(key).audio.transcriptions.create({ file: await wavFile(2_200), model: 'sandbox-transcribe', response_format: format });
      assert.equal(result, expected);
      assert.deepEqual((await usageRows(accountId))[0].units, { second: 3 });
      assert.equal((await gw.settled(accountId)).balance_micros, 1_000_000 - 3 * PER_SECOND);
    });
  }

  test('verbose_json with word and segment timestamps, billed on its duration', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    const result = await client(key).audio.transcriptions.create({
      file: await wavFile(2_500),
      model: 'sandbox-transcribe',
      response_format: 'verbose_json',
      timestamp_granularities: ['word', 'segment'],
    });
    assert.equal(result.duration, 2.5);
    assert.equal(result.text, 'transcribed speech of 2500 ms');
    assert.deepEqual(
      result.words?.map((w) => w.word),
      ['transcribed', 'speech', 'of', '2500', 'ms'],
    );
    assert.equal(result.segments?.length, 1);
    assert.deepEqual((await usageRows(accountId))[0].units, { second: 3 });
    assert.equal((await gw.settled(accountId)).balance_micros, 1_000_000 - 3 * PER_SECOND);
  });

  test('stream=true streams transcript.text.delta events then transcript.text.done, billed on its usage', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    const stream = await client(key).audio.transcriptions.create({ file: await wavFile(1_200), model: 'sandbox-transcribe', stream: true });
    const events: any[] = [];
    for await (const event of stream) events.push(event);
    const deltas = events.filter((e) => e.type === 'transcript.text.delta').map((e) => e.delta);
    assert.equal(deltas.join(''), 'transcribed speech of 1200 ms');
    assert.deepEqual(events.at(-1), { type: 'transcript.text.done', text: 'transcribed speech of 1200 ms', usage: { type: 'duration', seconds: 2 } });
    assert.equal((await gw.settled(accountId)).balance_micros, 1_000_000 - 2 * PER_SECOND);
  });

  test('a model priced in tokens is billed on the tokens the upstream reports', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    const result = await client(key).audio.transcriptions.create({ file: await wavFile(2_000), model: 'sandbox-gpt-4o-transcribe' });
    assert.equal((result as any).usage.type, 'tokens');
    // 2 s at 17 tokens a second in, five words out: 34 x 2.5 + 5 x 10 micros.
    assert.deepEqual((await usageRows(accountId))[0].units, { input_token: 34, output_token: 5 });
    assert.equal((await gw.settled(accountId)).balance_micros, 1_000_000 - (85 + 50));
  });

  test('a stream its caller leaves after the first text pays for the whole audio; never more', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'transcriptions', chunk_delay_ms: 200, times: 1 });
    const res = await post(key, { model: 'sandbox-transcribe', stream: 'true', file: makeWav({ ms: 3_000 }) });
    const reader = res.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    assert.match(first, /transcript\.text\.delta/);
    await reader.cancel();
    assert.equal((await gw.settled(accountId)).balance_micros, 1_000_000 - 3 * PER_SECOND);
  });

  test('an upstream 500 is a 502 and the hold is released', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'transcriptions', status: 500, times: 1 });
    const res = await post(key, { model: 'sandbox-transcribe', file: makeWav({ ms: 1_000 }) });
    assert.deepEqual({ status: res.status, body: await res.json() }, { status: 502, body: { error: 'upstream provider error', type: 'server_error' } });
    assert.equal((await gw.settled(accountId)).balance_micros, 1_000_000);
    assert.deepEqual(await usageRows(accountId), []);
  });

  test('a file that is not audio is 400 naming file, with nothing held and nothing sent upstream', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    const res = await post(key, { model: 'sandbox-transcribe', file: Buffer.from('%PDF-1.7 this is a document, not a recording') });
    const body = (await res.json()) as { error: string; type: string };
    assert.equal(res.status, 400);
    assert.equal(body.type, 'invalid_request_error');
    assert.match(body.error, /^file: not audio in a supported format \(flac, m4a, mp3, mp4, mpeg, mpga, ogg, wav, webm\)/);
    assert.deepEqual((await gw.admin('GET', `/admin/accounts/${accountId}/ledger`)).body.data.length, 1, 'the credit alone');
    assert.equal((await gw.balance(accountId)).held_micros, 0);
    assert.deepEqual((await gw.sandboxControl('GET', '/__sandbox/requests')).data, []);
  });

  for (const [fields, message] of [
    [{ response_format: 'xml' }, 'response_format: must be one of "json", "text", "srt", "verbose_json", "vtt"'],
    [{ 'timestamp_granularities[]': 'word' }, 'timestamp_granularities[]: needs response_format "verbose_json"'],
    [{ temperature: '3' }, 'temperature: must be a number from 0 to 1'],
    [{ colour: 'blue' }, 'colour: unknown field'],
  ] as const) {
    test(`a form with ${Object.keys(fields)[0]} wrong is 400 "${message}"`, async () => {
      const { key } = await gw.account();
      const res = await post(key, { model: 'sandbox-transcribe', ...fields, file: makeWav({ ms: 100 }) });
      assert.deepEqual({ status: res.status, body: await res.json() }, { status: 400, body: { error: message, type: 'invalid_request_error' } });
    });
  }

  test('a Content-Length past 25 MB is refused with 413 naming file before the body is read', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    // 830 s of 16 kHz 16-bit audio: 26.6 MB.
    const res = await postUpload(`${gw.url}/v1/audio/transcriptions`, [{ name: 'model', value: 'sandbox-transcribe' }, wavPart(830)], {
      authorization: `Bearer ${key}`,
    });
    assert.equal(res.status, 413);
    assert.equal(res.body.type, 'invalid_request_error');
    assert.match(res.body.error, new RegExp(`^file: larger than the transcription upload limit of ${LIMIT} bytes`));
    assert.ok(res.sentBeforeAnswer < res.length / 2, `sent ${res.sentBeforeAnswer} of ${res.length} bytes before the answer`);
    assert.deepEqual(await gw.balance(accountId), { ...(await gw.balance(accountId)), balance_micros: 1_000_000, held_micros: 0 });
  });

  test('a body without a Content-Length is cut at 25 MB with 413 naming file, nothing held', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    const boundary = 'transcriptionboundary';
    const head =
      `--${boundary}\r\nContent-Disposition: form-data; name="model"\r\n\r\nsandbox-transcribe\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="long.wav"\r\nContent-Type: audio/wav\r\n\r\n`;
    const chunk = Buffer.alloc(1024 * 1024, 0x11);
    // 27 MB of file, sent chunked (the server cannot know its length before it arrives), on a
    // connection of its own; the body's end waits for the answer, which must come while it is open.
    const answer = await new Promise<{ status: number; body: any }>((resolve, reject) => {
      const req = httpRequest(`${gw.url}/v1/audio/transcriptions`, {
        method: 'POST',
        agent: false,
        headers: { authorization: `Bearer ${key}`, 'content-type': `multipart/form-data; boundary=${boundary}`, 'transfer-encoding': 'chunked' },
      });
      req.on('error', reject);
      req.on('response', (res) => {
        const parts: Buffer[] = [];
        res.on('data', (part: Buffer) => parts.push(part));
        res.on('end', () => {
          resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(parts).toString('utf8')) });
          req.destroy();
        });
      });
      void (async () => {
        req.write(head);
        for (let mb = 0; mb < 27 && !req.destroyed; mb++) {
          if (!req.write(chunk)) await new Promise((resume) => req.once('drain', resume));
        }
      })();
    });
    assert.deepEqual(answer, {
      status: 413,
      body: { error: `file: larger than the transcription upload limit of ${LIMIT} bytes`, type: 'invalid_request_error' },
    });
    assert.deepEqual(await gw.balance(accountId), { ...(await gw.balance(accountId)), balance_micros: 1_000_000, held_micros: 0 });
  });

  test('a zero balance is refused with 402 before the upload is read', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 0 });
    const res = await postUpload(`${gw.url}/v1/audio/transcriptions`, [{ name: 'model', value: 'sandbox-transcribe' }, wavPart(600)], {
      authorization: `Bearer ${key}`,
    });
    assert.deepEqual({ status: res.status, type: res.body.type }, { status: 402, type: 'billing_error' });
    assert.ok(res.sentBeforeAnswer < res.length / 2, `sent ${res.sentBeforeAnswer} of ${res.length} bytes before the answer`);
    assert.deepEqual((await gw.admin('GET', `/admin/accounts/${accountId}/ledger`)).body.data, []);
  });

  test('an unknown model named before the file is 400 before the file is read', async () => {
    const { key } = await gw.account();
    const res = await postUpload(`${gw.url}/v1/audio/transcriptions`, [{ name: 'model', value: 'no-such-transcriber' }, wavPart(600)], {
      authorization: `Bearer ${key}`,
    });
    assert.deepEqual(
      { status: res.status, body: res.body },
      { status: 400, body: { error: 'unknown model: no-such-transcriber', type: 'invalid_request_error' } },
    );
    assert.ok(res.sentBeforeAnswer < res.length / 2, `sent ${res.sentBeforeAnswer} of ${res.length} bytes before the answer`);
  });

  test('a balance that covers a second but not the whole file is 402 once the file is in, nothing held', async () => {
    // 6 s of audio holds 600 micros.
    const { accountId, key } = await gw.account({ creditMicros: 500 });
    const res = await post(key, { model: 'sandbox-transcribe', file: makeWav({ ms: 6_000 }) });
    assert.equal(res.status, 402);
    assert.match(((await res.json()) as { error: string }).error, /this call needs to hold 600 micros; the account has 500 micros available$/);
    assert.deepEqual(await gw.balance(accountId), { ...(await gw.balance(accountId)), balance_micros: 500, held_micros: 0 });
  });

  test('a test key is served by the sandbox and billed from its test balance', async () => {
    const { accountId } = await gw.account();
    const testKey = (await gw.admin('POST', `/admin/accounts/${accountId}/test-keys`, {})).body.key;
    await gw.admin('POST', `/admin/accounts/${accountId}/test-credit`, { amount_micros: 1_000_000 });
    const result = await client(testKey).audio.transcriptions.create({ file: await wavFile(1_000), model: 'sandbox-transcribe' });
    assert.equal(result.text, 'transcribed speech of 1000 ms');
    const account = (await gw.admin('GET', `/admin/accounts/${accountId}`)).body;
    assert.deepEqual([account.balance_micros, account.test_balance_micros, account.test_held_micros], [10_000_000, 1_000_000 - PER_SECOND, 0]);
  });

  test('an Azure channel is called at its deployment path with its api-key', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    const result = await client(key).audio.transcriptions.create({ file: await wavFile(800), model: 'sandbox-transcribe-azure' });
    assert.equal(result.text, 'transcribed speech of 800 ms');
    const [sent] = (await gw.sandboxControl('GET', '/__sandbox/requests')).data;
    assert.equal(sent.kind, 'azure');
    assert.equal(sent.path, '/openai/deployments/whisper-deployment/audio/transcriptions?api-version=2024-10-21');
    assert.equal(sent.headers['api-key'], 'sk-sandbox');
    assert.equal((await gw.settled(accountId)).balance_micros, 1_000_000 - PER_SECOND);
  });

  test('an Idempotency-Key replays a json answer once charged, and is refused for text answers', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    const file = makeWav({ ms: 1_000 });
    const first = await post(key, { model: 'sandbox-transcribe', file }, { 'idempotency-key': 'tx-1' });
    const again = await post(key, { model: 'sandbox-transcribe', file }, { 'idempotency-key': 'tx-1' });
    assert.deepEqual(await again.json(), await first.json());
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.equal((await gw.settled(accountId)).balance_micros, 1_000_000 - PER_SECOND);
    const text = await post(key, { model: 'sandbox-transcribe', response_format: 'text', file }, { 'idempotency-key': 'tx-2' });
    assert.deepEqual(await text.json(), {
      error: 'Idempotency-Key: supported with response_format "json" or "verbose_json" only',
      type: 'invalid_request_error',
    });
  });
});
