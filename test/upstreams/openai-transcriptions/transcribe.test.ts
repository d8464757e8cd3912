// The transcription client against an upstream of the test's own: what it sends, and how it reads
// an answer in one piece, a stream, and a stream request a model answers in one piece (whisper-1).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { ChannelSchema, type ModelConfig } from '../../../src/config/schema.js';
import { type TranscriptionRequest, transcribe } from '../../../src/upstreams/openai-transcriptions/client.js';
import { createUpstreams, type Upstreams } from '../../../src/upstreams/pool.js';
import { makeWav } from '../../helpers/wav.js';

let answer: (body: string, res: ServerResponse) => void = () => {};
const received: { path: string; headers: IncomingMessage['headers']; body: string }[] = [];
const server = createServer((req, res) => {
  let body = '';
  req.setEncoding('latin1');
  req.on('data', (chunk) => (body += chunk));
  req.on('end', () => {
    received.push({ path: req.url ?? '', headers: req.headers, body });
    answer(body, res);
  });
});
const dir = mkdtempSync(path.join(tmpdir(), 'tollroute-transcribe-'));
const wavPath = path.join(dir, 'upload');
let upstreams: Upstreams;
before(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  upstreams = createUpstreams({ c: ChannelSchema.parse({ kind: 'openai', base_url: base, api_key: 'sk-up' }) });
  writeFileSync(wavPath, makeWav({ ms: 1_000 }));
});
after(async () => {
  await upstreams.close();
  server.close();
  rmSync(dir, { recursive: true, force: true });
});

const model = { price: { second: 100 } } as ModelConfig;
const request = (fields: Partial<TranscriptionRequest>): TranscriptionRequest => ({
  responseFormat: 'json',
  timestampGranularities: [],
  include: [],
  stream: false,
  ...fields,
});
const call = (fields: Partial<TranscriptionRequest>) =>
  transcribe(upstreams.get('c'), {
    request: request(fields),
    audio: { path: wavPath, filename: 'audio.wav', contentType: 'audio/wav' },
    upstreamModel: 'whisper-1',
    model,
    estimate: { second: 1 },
    signal: AbortSignal.timeout(5_000),
  });

test('the file and fields go as multipart, with the bearer key', async () => {
  answer = (_body, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"text":"hi","usage":{"type":"duration","seconds":1}}');
  received.length = 0;
  const result = await call({ language: 'en', responseFormat: 'verbose_json', timestampGranularities: ['word', 'segment'] });
  assert.deepEqual(result, { kind: 'json', text: '{"text":"hi","usage":{"type":"duration","seconds":1}}', units: { second: 1 } });
  const [sent] = received;
  assert.equal(sent!.path, '/v1/audio/transcriptions');
  assert.equal(sent!.headers.authorization, 'Bearer sk-up');
  assert.match(String(sent!.headers['content-type']), /^multipart\/form-data; boundary=/);
  for (const part of ['name="model"\r\n\r\nwhisper-1', 'filename="audio.wav"', 'name="language"\r\n\r\nen', 'name="timestamp_granularities[]"\r\n\r\nword']) {
    assert.ok(sent!.body.includes(part), part);
  }
  assert.ok(sent!.body.includes(makeWav({ ms: 1_000 }).toString('latin1')), 'the whole file');
  assert.ok(!sent!.body.includes('name="stream"'));
});

test('a stream request answered in one piece (a model that does not stream) is read as one', async () => {
  answer = (_body, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"text":"hi","usage":{"type":"duration","seconds":1}}');
  received.length = 0;
  const result = await call({ stream: true });
  assert.equal(result.kind, 'json');
  assert.ok(received[0]!.body.includes('name="stream"\r\n\r\ntrue'));
});

test('text answers are passed on with their content type, billed on the estimate', async () => {
  answer = (_body, res) => res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end('hi\n');
  assert.deepEqual(await call({ responseFormat: 'srt' }), { kind: 'text', text: 'hi\n', contentType: 'text/plain; charset=utf-8', units: { second: 1 } });
});

test('an SSE answer is a stream under a meter that completes at transcript.text.done', async () => {
  answer = (_body, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: {"type":"transcript.text.delta","delta":"hi"}\n\n');
    res.end('data: {"type":"transcript.text.done","text":"hi","usage":{"type":"duration","seconds":1}}\n\n');
  };
  const result = await call({ stream: true });
  assert.equal(result.kind, 'stream');
  if (result.kind !== 'stream') return;
  let text = '';
  for await (const chunk of result.body) text += chunk;
  assert.match(text, /transcript\.text\.done/);
  assert.deepEqual([result.meter.completed, result.meter.reported()], [true, { second: 1 }]);
});

test('malformed JSON in one piece is an error, never passed on', async () => {
  answer = (_body, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"text":"h');
  await assert.rejects(call({}), SyntaxError);
});

test('an error status is an UpstreamHttpError carrying the upstream reason', async () => {
  answer = (_body, res) => res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":{"message":"Invalid file format."}}');
  await assert.rejects(call({}), (error: any) => error.statusCode === 400 && error.reason() === 'Invalid file format.');
});
