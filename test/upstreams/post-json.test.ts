// postJson: an answer read as it comes, through undici's dispatch and a body stream of the
// gateway's own (streamed-answer.ts): the body as it arrives, node's headers, error answers as
// UpstreamHttpError, and a caller who leaves, or a body left unread, stopping the call.
import assert from 'node:assert/strict';
import { getEventListeners, once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { postJson, UpstreamHttpError } from '../../src/upstreams/http.js';
import type { Upstream } from '../../src/upstreams/pool.js';
import { WaitBoundedPool } from '../../src/upstreams/wait-bounded-pool.js';

type Route = (req: IncomingMessage, res: ServerResponse) => void;
const routes = new Map<string, Route>();
const received: { path: string; body: string; socket: Socket }[] = [];
const closed = new Set<string>();
let server: Server;
let origin: string;

before(async () => {
  server = createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    received.push({ path: req.url ?? '', body, socket: req.socket });
    res.once('close', () => closed.add(req.url ?? ''));
    routes.get(req.url ?? '')?.(req, res);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => server.close());

async function withUpstream(use: (upstream: Upstream) => Promise<void>, connections = 2) {
  const pool = new WaitBoundedPool(origin, { channel: 'test-channel', connections, maxWaitMs: 5_000 });
  try {
    await use({ name: 'test-channel', channel: {} as Upstream['channel'], pool, basePath: '/base' });
  } finally {
    await pool.destroy();
  }
}
const post = (upstream: Upstream, path: string, signal = new AbortController().signal) => postJson(upstream, { path, body: { n: 1 }, signal });
/** An answer begun and never finished. */
const startEndlessAnswer = (res: ServerResponse) => {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.write('data: 1\n\n');
};

/** An answer whose connection breaks after its first event. */
const breakOffAfterFirstEvent: Route = (req, res) => {
  startEndlessAnswer(res);
  setTimeout(() => req.socket.destroy(), 20);
};

test('the body is read as it comes: its first part before the upstream has finished', () =>
  withUpstream(async (upstream) => {
    let finish = () => {};
    routes.set('/base/parts', (_req, res) => {
      startEndlessAnswer(res);
      finish = () => res.end('data: 2\n\n');
    });
    const { statusCode, body } = await post(upstream, '/parts');
    assert.equal(statusCode, 200);
    const [first] = (await once(body, 'data')) as [Buffer];
    assert.equal(first.toString(), 'data: 1\n\n');
    body.pause();
    finish();
    assert.equal(await body.text(), 'data: 2\n\n');
    assert.deepEqual(JSON.parse(received.find((r) => r.path === '/base/parts')!.body), { n: 1 });
  }));

test('the headers are as node gives them: names in lower case, a repeated one as a list', () =>
  withUpstream(async (upstream) => {
    routes.set('/base/headers', (_req, res) => {
      res.setHeader('X-Upstream-Id', 'abc');
      res.setHeader('Set-Cookie', ['a=1', 'b=2']);
      res.end('{}');
    });
    const { headers, body } = await post(upstream, '/headers');
    assert.equal(headers['x-upstream-id'], 'abc');
    assert.deepEqual(headers['set-cookie'], ['a=1', 'b=2']);
    assert.deepEqual(await body.json(), {});
  }));

test('an informational answer before the answer itself is passed over', () =>
  withUpstream(async (upstream) => {
    routes.set('/base/hints', (_req, res) => {
      res.writeEarlyHints({ link: '</style.css>; rel=preload' });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"after":"hints"}');
    });
    const { statusCode, headers, body } = await post(upstream, '/hints');
    assert.equal(statusCode, 200);
    assert.equal(headers.link, undefined);
    assert.deepEqual(await body.json(), { after: 'hints' });
  }));

test('an error status throws UpstreamHttpError with its body (limited to 64 KiB), content type and Retry-After', () =>
  withUpstream(async (upstream) => {
    routes.set('/base/refused', (_req, res) => {
      res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '3' });
      res.end(`{"error":{"message":"overloaded"}}${' '.repeat(100_000)}`);
    });
    const error = await post(upstream, '/refused').then(
      () => assert.fail('resolved'),
      (e: unknown) => e,
    );
    assert.ok(error instanceof UpstreamHttpError);
    assert.equal(error.statusCode, 503);
    assert.equal(error.contentType, 'application/json');
    assert.equal(error.retryAfterMs, 3_000);
    assert.equal(error.body.length, 64 * 1024);
    assert.equal(error.reason(), 'overloaded');
  }));

test('a caller who has already left sends nothing', () =>
  withUpstream(async (upstream) => {
    const before = received.length;
    await assert.rejects(post(upstream, '/never', AbortSignal.abort(new Error('gone'))), /gone/);
    await sleep(50);
    assert.equal(received.length, before);
  }));

test('a caller who leaves mid-answer fails the body with their reason, closes the connection and leaves no listener', () =>
  withUpstream(async (upstream) => {
    routes.set('/base/left', (_req, res) => startEndlessAnswer(res));
    const caller = new AbortController();
    const { body } = await post(upstream, '/left', caller.signal);
    await once(body, 'data');
    caller.abort(new Error('caller left'));
    const [error] = (await once(body, 'error')) as [Error];
    assert.match(error.message, /caller left/);
    await sleep(50);
    assert.ok(closed.has('/base/left'), 'the upstream connection is closed');
    assert.equal(getEventListeners(caller.signal, 'abort').length, 0);
  }));

test('a body destroyed before its end stops the upstream call', () =>
  withUpstream(async (upstream) => {
    routes.set('/base/dropped', (_req, res) => startEndlessAnswer(res));
    const { body } = await post(upstream, '/dropped');
    await once(body, 'data');
    body.destroy();
    await sleep(50);
    assert.ok(closed.has('/base/dropped'));
  }));

test('an upstream that breaks off mid-body fails the body', () =>
  withUpstream(async (upstream) => {
    routes.set('/base/broken', breakOffAfterFirstEvent);
    const { body } = await post(upstream, '/broken');
    await assert.rejects(body.text(), (error: unknown) => error instanceof Error);
    assert.equal(body.readableEnded, false);
  }));

test('a body that fails before anyone reads it raises no uncaught error, and fails whoever reads it later', () =>
  withUpstream(async (upstream) => {
    routes.set('/base/broken-unread', breakOffAfterFirstEvent);
    const { body } = await post(upstream, '/broken-unread');
    await sleep(100); // an uncaught error would fail the test run here
    assert.ok(body.errored instanceof Error);
    await assert.rejects(body.text(), (error: unknown) => error === body.errored);
  }));

test('a body read to its end leaves its connection for the next call', () =>
  withUpstream(async (upstream) => {
    routes.set('/base/again', (_req, res) => res.end('{"ok":true}'));
    assert.deepEqual(await (await post(upstream, '/again')).body.json(), { ok: true });
    assert.deepEqual(await (await post(upstream, '/again')).body.json(), { ok: true });
    const [first, second] = received.filter((r) => r.path === '/base/again');
    assert.equal(first!.socket, second!.socket);
  }, 1));
