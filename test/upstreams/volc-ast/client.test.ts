// The AST 2.0 client against a scripted in-test WebSocket server.
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { after, test } from 'node:test';
import { type ServerOptions, type WebSocket, WebSocketServer } from 'ws';
import { AstUpstreamError, type TranslateSpeechArgs, translateSpeech } from '../../../src/upstreams/volc-ast/client.js';
import {
  decodeTranslateRequest,
  EVENT,
  encodeTranslateResponse,
  type MessageInit,
  type TranslateRequest,
  type TranslateResponse,
} from '../../../src/upstreams/volc-ast/proto.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface Session {
  url: string;
  headers: IncomingHttpHeaders;
  /** The next request the client sent, decoded. */
  next(): Promise<TranslateRequest>;
  /** Requests up to and including FinishSession. */
  untilFinish(): Promise<TranslateRequest[]>;
  reply(message: MessageInit<TranslateResponse>): void;
  socket: WebSocket;
  closed: Promise<number>;
}

const servers: WebSocketServer[] = [];
after(() => Promise.all(servers.map((s) => new Promise((done) => s.close(done)))));

/** A server on a free port that runs `script` for each connection. */
async function serve(script: (session: Session) => Promise<void> | void, options: ServerOptions = {}) {
  const server = new WebSocketServer({ port: 0, host: '127.0.0.1', ...options });
  servers.push(server);
  await new Promise<void>((ready) => server.once('listening', ready));
  const sessions: Session[] = [];
  server.on('connection', (socket, request) => {
    const queue: TranslateRequest[] = [];
    const waiting: ((r: TranslateRequest) => void)[] = [];
    socket.on('message', (data) => {
      const decoded = decodeTranslateRequest(data as Buffer);
      const waiter = waiting.shift();
      if (waiter) waiter(decoded);
      else queue.push(decoded);
    });
    const session: Session = {
      url: request.url ?? '',
      headers: request.headers,
      socket,
      next: () => new Promise((got) => (queue.length > 0 ? got(queue.shift() as TranslateRequest) : waiting.push(got))),
      async untilFinish() {
        const seen: TranslateRequest[] = [];
        for (;;) {
          const request = await session.next();
          seen.push(request);
          if (request.event === EVENT.FinishSession) return seen;
        }
      },
      reply: (message) => socket.send(encodeTranslateResponse(message)),
      closed: new Promise((done) => socket.once('close', done)),
    };
    sessions.push(session);
    void Promise.resolve(script(session)).catch((error: unknown) => socket.close(1011, String(error)));
  });
  const { port } = server.address() as AddressInfo;
  return { baseUrl: `http://127.0.0.1:${port}`, sessions };
}

const pcm = (bytes: number) => Buffer.from(Array.from({ length: bytes }, (_, i) => i % 251));
const base = (baseUrl: string, over: Partial<TranslateSpeechArgs> = {}): TranslateSpeechArgs => ({
  baseUrl,
  appId: 'app-1',
  accessKey: 'key-1',
  mode: 's2t',
  sourceLanguage: 'zh',
  targetLanguage: 'en',
  pcm: pcm(8000),
  signal: new AbortController().signal,
  ...over,
});
const astError =
  (kind: string, extra: Record<string, unknown> = {}) =>
  (error: unknown) => {
    assert.ok(error instanceof AstUpstreamError, `expected an AstUpstreamError, got ${String(error)}`);
    assert.equal(error.kind, kind, error.message);
    for (const [key, value] of Object.entries(extra)) {
      assert.deepEqual(
        key === 'message' ? (value as RegExp).test(error.message) : (error as unknown as Record<string, unknown>)[key],
        key === 'message' ? true : value,
        key,
      );
    }
    return true;
  };

test('s2t: the session is opened with our headers and config, the PCM is sent in 100 ms frames, and the final text comes back', async () => {
  let start: TranslateRequest | undefined;
  let audio: TranslateRequest[] = [];
  const { baseUrl, sessions } = await serve(async (s) => {
    start = await s.next();
    s.reply({ event: EVENT.SessionStarted });
    audio = await s.untilFinish();
    s.reply({ event: EVENT.SourceSubtitleStart });
    s.reply({ event: EVENT.SourceSubtitleResponse, text: '你' });
    s.reply({ event: EVENT.SourceSubtitleEnd, text: '你好。' });
    s.reply({ event: EVENT.TranslationSubtitleEnd, text: 'Hello.' });
    s.reply({ event: EVENT.SourceSubtitleEnd, text: '再见。' });
    s.reply({ event: EVENT.TranslationSubtitleEnd, text: 'Goodbye.' });
    s.reply({ event: EVENT.UsageResponse, response_meta: { billing: { duration_ms: 250, input_tokens: 12, output_tokens: 34 } } });
    s.reply({ event: EVENT.SessionFinished });
  });

  const result = await translateSpeech(base(`${baseUrl}/`));

  assert.deepEqual(result, { sourceText: '你好。 再见。', text: 'Hello. Goodbye.', usage: { input_token: 12, output_token: 34 }, durationMs: 250 });
  const session = sessions[0] as Session;
  assert.equal(session.url, '/api/v4/ast/v2/translate');
  assert.deepEqual(
    { app: session.headers['x-api-app-key'], key: session.headers['x-api-access-key'], resource: session.headers['x-api-resource-id'] },
    { app: 'app-1', key: 'key-1', resource: 'volc.service_type.10053' },
  );
  assert.match(String(session.headers['x-api-connect-id']), UUID);
  const sessionId = start?.request_meta?.SessionID ?? '';
  assert.match(sessionId, UUID);
  assert.deepEqual(start, {
    request_meta: { Endpoint: '', AppKey: '', AppID: '', ResourceID: '', ConnectionID: '', SessionID: sessionId, Sequence: 0 },
    event: EVENT.StartSession,
    user: { uid: 'tollroute', did: 'tollroute' },
    source_audio: { format: 'wav', codec: 'raw', rate: 16_000, bits: 16, channel: 1, binary_data: Buffer.alloc(0) },
    request: { mode: 's2t', source_language: 'zh', target_language: 'en', voice: '' },
  });
  assert.deepEqual(
    audio.map((r) => [r.event, r.request_meta?.SessionID, r.source_audio?.binary_data.length ?? 0]),
    [
      [EVENT.TaskRequest, sessionId, 3200],
      [EVENT.TaskRequest, sessionId, 3200],
      [EVENT.TaskRequest, sessionId, 1600],
      [EVENT.FinishSession, sessionId, 0],
    ],
  );
  assert.deepEqual(Buffer.concat(audio.map((r) => r.source_audio?.binary_data ?? Buffer.alloc(0))), pcm(8000));
});

test('s2s: target audio is asked for, and each Ogg chunk reaches onAudio in order before the answer resolves', async () => {
  let start: TranslateRequest | undefined;
  const { baseUrl, sessions } = await serve(async (s) => {
    start = await s.next();
    s.reply({ event: EVENT.SessionStarted });
    await s.untilFinish();
    s.reply({ event: EVENT.TTSResponse, data: Buffer.from('OggS-a') });
    s.reply({ event: EVENT.TranslationSubtitleEnd, text: 'Hi.' });
    s.reply({ event: EVENT.TTSResponse, data: Buffer.from('OggS-b') });
    s.reply({ event: EVENT.TTSResponse, data: Buffer.from('OggS-c') });
    s.reply({ event: EVENT.SessionFinished });
  });
  const chunks: string[] = [];

  const result = await translateSpeech(base(`${baseUrl}/volc/`, { mode: 's2s', voice: 'v-1', resourceId: 'res-9', onAudio: (c) => chunks.push(c.toString()) }));

  assert.deepEqual(chunks, ['OggS-a', 'OggS-b', 'OggS-c']);
  // no usage report: the duration is the PCM's own (8000 bytes at 32 bytes/ms)
  assert.deepEqual(result, { sourceText: '', text: 'Hi.', usage: undefined, durationMs: 250 });
  assert.equal(sessions[0]?.url, '/volc/api/v4/ast/v2/translate');
  assert.equal(sessions[0]?.headers['x-api-resource-id'], 'res-9');
  assert.deepEqual(start?.target_audio, { format: 'ogg_opus', codec: '', rate: 24_000, bits: 0, channel: 0, binary_data: Buffer.alloc(0) });
  assert.deepEqual(start?.request, { mode: 's2s', source_language: 'zh', target_language: 'en', voice: 'v-1' });
});

test('a large file is sent whole and in order, the sender waiting on the socket rather than queueing it all', async () => {
  let received = Buffer.alloc(0);
  let sizes = new Set<number>();
  const { baseUrl } = await serve(async (s) => {
    await s.next();
    s.reply({ event: EVENT.SessionStarted });
    const audio = (await s.untilFinish()).slice(0, -1).map((r) => r.source_audio?.binary_data ?? Buffer.alloc(0));
    received = Buffer.concat(audio);
    sizes = new Set(audio.slice(0, -1).map((b) => b.length));
    s.reply({ event: EVENT.SessionFinished });
  });
  const big = pcm(4 * 1024 * 1024 + 100);

  await translateSpeech(base(baseUrl, { pcm: big }));

  assert.equal(received.equals(big), true);
  assert.deepEqual([...sizes], [3200]);
});

test('a SessionFailed rejects with its message, status and whether a retry may help', async () => {
  const { baseUrl } = await serve(async (s) => {
    await s.next();
    s.reply({ event: EVENT.SessionStarted });
    await s.next();
    s.reply({ event: EVENT.SessionFailed, response_meta: { StatusCode: 55_000_000, Message: 'Engine:1022 model inference error' } });
  });

  await assert.rejects(
    translateSpeech(base(baseUrl)),
    astError('session_failed', { message: /AST session failed: Engine:1022 model inference error/, statusCode: 55_000_000, retryable: true }),
  );
});

test('a SessionFailed before the session starts (bad credentials) is not worth retrying', async () => {
  const { baseUrl } = await serve(async (s) => {
    await s.next();
    s.reply({ event: EVENT.SessionFailed, response_meta: { StatusCode: 45_000_001, Message: 'invalid_access_key' } });
  });

  await assert.rejects(translateSpeech(base(baseUrl)), astError('session_failed', { statusCode: 45_000_001, retryable: false }));
});

test("an abort mid-session closes the socket and rejects with the signal's reason", async () => {
  const controller = new AbortController();
  const reason = new Error('client closed the connection');
  const { baseUrl, sessions } = await serve(async (s) => {
    await s.next();
    s.reply({ event: EVENT.SessionStarted });
    await s.next(); // the first audio frame: the call is under way
    controller.abort(reason);
  });

  await assert.rejects(translateSpeech(base(baseUrl, { pcm: pcm(1024 * 1024), signal: controller.signal })), (error) => error === reason);
  await sessions[0]?.closed; // the server sees the socket go
});

test('an already aborted signal rejects without connecting', async () => {
  const { baseUrl, sessions } = await serve(() => assert.fail('no connection expected'));
  const reason = new Error('gone');

  await assert.rejects(translateSpeech(base(baseUrl, { signal: AbortSignal.abort(reason) })), (error) => error === reason);
  assert.equal(sessions.length, 0);
});

test('a refused connection rejects with a connection error', async () => {
  const server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise<void>((ready) => server.once('listening', ready));
  const { port } = server.address() as AddressInfo;
  await new Promise((closed) => server.close(closed));

  await assert.rejects(translateSpeech(base(`http://127.0.0.1:${port}`)), astError('connection', { message: /ECONNREFUSED/, retryable: true }));
});

test("a refused upgrade reports the status, the upstream's message and its log id", async () => {
  const { baseUrl } = await serve(() => undefined, {
    verifyClient: (_info, done) => done(false, 401, 'Unauthorized', { 'X-Api-Message': 'invalid access key', 'X-Tt-Logid': 'log-401' }),
  });

  await assert.rejects(
    translateSpeech(base(baseUrl)),
    astError('handshake', { message: /401: invalid access key/, statusCode: 401, logId: 'log-401', retryable: false }),
  );
});

test('a refused upgrade without a message header is explained by its JSON body', async () => {
  const server = createServer();
  server.on('upgrade', (_req, socket: Duplex) => {
    const body = JSON.stringify({ code: 45000030, message: 'resource not granted' });
    socket.end(`HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  after(() => new Promise((closed) => server.close(closed)));
  const { port } = server.address() as AddressInfo;

  await assert.rejects(
    translateSpeech(base(`http://127.0.0.1:${port}`)),
    astError('handshake', { message: /403: resource not granted$/, statusCode: 403, retryable: false }),
  );
});

test('the upstream closing before SessionFinished rejects, naming the close code', async () => {
  const { baseUrl } = await serve(async (s) => {
    await s.next();
    s.reply({ event: EVENT.SessionStarted });
    await s.next();
    s.socket.close(1011, 'engine restarting');
  });

  await assert.rejects(translateSpeech(base(baseUrl)), astError('closed', { message: /code 1011: engine restarting/ }));
});

test('an undecodable message from the upstream is a protocol error', async () => {
  const { baseUrl } = await serve(async (s) => {
    await s.next();
    s.socket.send(Buffer.from([0x0a, 0x05, 0x32]));
  });

  await assert.rejects(translateSpeech(base(baseUrl)), astError('protocol', { message: /undecodable/ }));
});

test('an upstream that never answers is given up on at the timeout', async () => {
  const { baseUrl, sessions } = await serve(() => undefined);

  await assert.rejects(translateSpeech(base(baseUrl, { timeoutMs: 200 })), astError('timeout', { message: /200 ms/ }));
  await sessions[0]?.closed;
});

test('an onAudio that throws ends the call with its own error', async () => {
  const { baseUrl } = await serve(async (s) => {
    await s.next();
    s.reply({ event: EVENT.SessionStarted });
    await s.untilFinish();
    s.reply({ event: EVENT.TTSResponse, data: Buffer.from('OggS') });
    s.reply({ event: EVENT.SessionFinished });
  });
  const broken = new Error('the reader went away');

  await assert.rejects(
    translateSpeech(
      base(baseUrl, {
        mode: 's2s',
        onAudio: () => {
          throw broken;
        },
      }),
    ),
    (error) => error === broken,
  );
});

test('a PCM source read in odd-sized pieces reaches the upstream as the same bytes in 100 ms frames', async () => {
  let received = Buffer.alloc(0);
  let sizes: number[] = [];
  const { baseUrl } = await serve(async (s) => {
    await s.next();
    s.reply({ event: EVENT.SessionStarted });
    const audio = (await s.untilFinish()).slice(0, -1).map((r) => r.source_audio?.binary_data ?? Buffer.alloc(0));
    received = Buffer.concat(audio);
    sizes = audio.map((b) => b.length);
    s.reply({ event: EVENT.SessionFinished });
  });
  const bytes = pcm(10_000);
  let opened = 0;
  const source = {
    length: bytes.length,
    async *open() {
      opened++;
      for (let offset = 0; offset < bytes.length; offset += 777) yield bytes.subarray(offset, offset + 777);
    },
  };

  await translateSpeech(base(baseUrl, { pcm: source }));

  assert.equal(received.equals(bytes), true);
  assert.deepEqual(sizes, [3200, 3200, 3200, 400]);
  assert.equal(opened, 1);
});

test('a PCM source is released when the session fails while it is being read, and never opened when it fails before starting', async () => {
  const { baseUrl } = await serve(async (s) => {
    await s.next();
    s.reply({ event: EVENT.SessionStarted });
    await s.next(); // the first frame
    s.reply({ event: EVENT.SessionFailed, response_meta: { StatusCode: 55_000_000, Message: 'Engine:1022 model inference error' } });
  });
  let released!: () => void;
  const wasReleased = new Promise<void>((resolve) => (released = resolve));
  const endless = {
    length: 1024 * 1024 * 1024,
    async *open() {
      try {
        for (;;) {
          yield Buffer.alloc(64 * 1024);
          await new Promise((resolve) => setImmediate(resolve));
        }
      } finally {
        released();
      }
    },
  };
  await assert.rejects(translateSpeech(base(baseUrl, { pcm: endless })), astError('session_failed'));
  await wasReleased;

  const { baseUrl: refusing } = await serve(async (s) => {
    await s.next();
    s.reply({ event: EVENT.SessionFailed, response_meta: { StatusCode: 45_000_001, Message: 'invalid_access_key' } });
  });
  const neverOpened = { length: 3200, open: () => assert.fail('the source should not be opened') };
  await assert.rejects(translateSpeech(base(refusing, { pcm: neverOpened })), astError('session_failed'));
});
