// postForText: a whole answer read without a body stream, with the same promises as postJson:
// the body whole however it is cut, error answers as UpstreamHttpError (their body limited), and a
// caller who leaves stops the call, before it is sent or while its answer arrives.
import assert from 'node:assert/strict';
import { getEventListeners, once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { abortSlotFree, addAbortSlot } from '../../src/abort-slot.js';
import { postForText, UpstreamHttpError } from '../../src/upstreams/http.js';
import type { Upstream } from '../../src/upstreams/pool.js';
import { LeftBeforeSendError, WaitBoundedPool } from '../../src/upstreams/wait-bounded-pool.js';

type Route = (req: IncomingMessage, res: ServerResponse, body: string) => void;
const routes = new Map<string, Route>();
const received: { path: string; body: string; contentType: string | undefined }[] = [];
let server: Server;
let origin: string;
let closedMidAnswer = 0;

before(async () => {
  server = createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    received.push({ path: req.url ?? '', body, contentType: req.headers['content-type'] });
    routes.get(req.url ?? '')?.(req, res, body);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => server.close());

const upstreamOf = (connections = 4): Upstream => ({
  name: 'test-channel',
  channel: {} as Upstream['channel'],
  pool: new WaitBoundedPool(origin, { channel: 'test-channel', connections, maxWaitMs: 5_000 }),
  basePath: '/base',
});
/** An answer begun and never finished: the caller is mid-answer until it leaves. */
const startAnswerNeverEnding = (res: ServerResponse) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.write('{"part":');
};
const post = (upstream: Upstream, path: string, signal = new AbortController().signal) =>
  postForText(upstream, { path, body: { n: 1 }, headers: { 'x-k': 'v' }, signal });

test('the body is read whole, however many chunks it comes in, and the request is JSON', async () => {
  const words = Array.from({ length: 20_000 }, (_, i) => `w${i}é`);
  routes.set('/base/chunks', (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    for (const word of words) res.write(`${word} `);
    res.end();
  });
  const upstream = upstreamOf();
  try {
    const text = await post(upstream, '/chunks');
    assert.equal(text, words.map((w) => `${w} `).join(''));
    const sent = received.find((r) => r.path === '/base/chunks');
    assert.deepEqual(sent && { body: JSON.parse(sent.body), type: sent.contentType }, { body: { n: 1 }, type: 'application/json' });
  } finally {
    await upstream.pool.close();
  }
});

test('an error status throws UpstreamHttpError with its body (limited to 64 KiB), content type and Retry-After', async () => {
  routes.set('/base/refused', (_req, res) => {
    res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '7' });
    res.end(`{"error":{"message":"slow down"}}${' '.repeat(100_000)}`);
  });
  const upstream = upstreamOf();
  try {
    const error = await post(upstream, '/refused').then(
      () => assert.fail('resolved'),
      (e: unknown) => e,
    );
    assert.ok(error instanceof UpstreamHttpError);
    assert.equal(error.statusCode, 429);
    assert.equal(error.contentType, 'application/json');
    assert.equal(error.retryAfterMs, 7_000);
    assert.equal(error.body.length, 64 * 1024);
    assert.equal(error.reason(), 'slow down');
  } finally {
    await upstream.pool.close();
  }
});

test('a caller who has already left sends nothing', async () => {
  const upstream = upstreamOf();
  const before = received.length;
  try {
    const left = AbortSignal.abort(new Error('gone'));
    await assert.rejects(post(upstream, '/never', left), /gone/);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(received.length, before);
  } finally {
    await upstream.pool.close();
  }
});

test('a caller who leaves while the answer arrives stops it: the call fails with their reason and the connection closes', async () => {
  routes.set('/base/slow', (_req, res) => {
    startAnswerNeverEnding(res);
    res.on('close', () => void closedMidAnswer++);
  });
  const upstream = upstreamOf();
  try {
    const caller = new AbortController();
    const call = post(upstream, '/slow', caller.signal);
    await new Promise((resolve) => setTimeout(resolve, 100));
    caller.abort(new Error('caller left'));
    await assert.rejects(call, /caller left/);
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(closedMidAnswer, 1);
    assert.equal(getEventListeners(caller.signal, 'abort').length, 0);
  } finally {
    await upstream.pool.close();
  }
});

test('a caller who leaves while waiting for a connection is let go unsent', async () => {
  routes.set('/base/held', (_req, res) => setTimeout(() => res.end('{}'), 300));
  const upstream = upstreamOf(1);
  try {
    const first = post(upstream, '/held');
    const caller = new AbortController();
    const queued = post(upstream, '/held', caller.signal);
    caller.abort(new Error('gone'));
    await assert.rejects(queued, LeftBeforeSendError);
    assert.equal(await first, '{}');
    assert.equal(received.filter((r) => r.path === '/base/held').length, 1);
  } finally {
    await upstream.pool.close();
  }
});

test('after the answer, the call keeps no listener on the caller’s signal', async () => {
  routes.set('/base/ok', (_req, res) => res.end('{"ok":true}'));
  const upstream = upstreamOf();
  try {
    const caller = new AbortController();
    assert.equal(await post(upstream, '/ok', caller.signal), '{"ok":true}');
    assert.equal(getEventListeners(caller.signal, 'abort').length, 0);
  } finally {
    await upstream.pool.close();
  }
});

test('a call’s reused signal is listened to through its slot: no listener added, the slot free after the answer', async () => {
  routes.set('/base/ok', (_req, res) => res.end('{"ok":true}'));
  const upstream = upstreamOf();
  try {
    const caller = new AbortController();
    addAbortSlot(caller.signal);
    const call = post(upstream, '/ok', caller.signal);
    assert.equal(await call, '{"ok":true}');
    assert.equal(getEventListeners(caller.signal, 'abort').length, 1, 'the slot’s own listener only');
    assert.equal(abortSlotFree(caller.signal), true);
  } finally {
    await upstream.pool.close();
  }
});

test('a caller who leaves mid-answer stops the call through the signal’s slot', async () => {
  routes.set('/base/slow-slotted', (_req, res) => startAnswerNeverEnding(res));
  const upstream = upstreamOf();
  try {
    const caller = new AbortController();
    addAbortSlot(caller.signal);
    const call = post(upstream, '/slow-slotted', caller.signal);
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(abortSlotFree(caller.signal), false, 'the request listens through the slot');
    caller.abort(new Error('caller left'));
    await assert.rejects(call, /caller left/);
    assert.equal(abortSlotFree(caller.signal), true);
  } finally {
    await upstream.pool.close();
  }
});
