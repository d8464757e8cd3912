// What a metered stream waits for before its answer goes out: its first data, left buffered for the
// pipe that follows; a stream that fails or ends empty first is a failed attempt.
import assert from 'node:assert/strict';
import { PassThrough, type Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { test } from 'node:test';
import { firstData } from '../../src/pipeline/first-answer.js';
import { observeSseJson } from '../../src/upstreams/sse.js';
import { PassThroughTap } from '../../src/upstreams/tap.js';

/** An SSE body fed by hand, through the gateway's tap; `observe` may keep events back. */
function sseTap(observe: () => boolean | undefined = () => undefined) {
  const upstream = new PassThrough();
  const body = observeSseJson(upstream, observe);
  assert.ok(body instanceof PassThroughTap);
  return { upstream, body };
}

/** Everything a reader piped from `body` receives, once it ends. */
function drained(body: Readable): Promise<string> {
  return text(body.pipe(new PassThrough()));
}

test("a tap's first data ends the wait, and stays buffered for the reader", async () => {
  const { upstream, body } = sseTap();
  const waiting = firstData(body);
  upstream.write('data: {"n":1}\n\n');
  await waiting;
  assert.ok(body.readableLength > 0, 'the first event is still in the tap, not consumed by the wait');
  assert.equal(body.listenerCount('readable'), 0, 'no readable listener left behind');
});

test('asked after the first data was pushed, the wait resolves at once', async () => {
  const { upstream, body } = sseTap();
  upstream.write('data: {"n":1}\n\n');
  await new Promise((resolve) => setImmediate(resolve));
  await firstData(body);
  assert.ok(body.readableLength > 0);
});

test('a pipe after the wait receives every byte of the stream, in order', async () => {
  const { upstream, body } = sseTap();
  const waiting = firstData(body);
  upstream.write('data: {"n":1}\n\n');
  await waiting;
  upstream.end('data: {"n":2}\n\ndata: [DONE]\n\n');
  assert.equal(await drained(body), 'data: {"n":1}\n\ndata: {"n":2}\n\ndata: [DONE]\n\n');
});

test('a tap that ends without data fails the wait', async () => {
  const { upstream, body } = sseTap();
  const waiting = firstData(body);
  body.resume();
  upstream.end();
  await assert.rejects(waiting, /ended without data/);
});

test('a tap whose events were all kept back ends without data, and fails the wait', async () => {
  const { upstream, body } = sseTap(() => false);
  const waiting = firstData(body);
  body.resume();
  upstream.end('data: {"kept":"back"}\n\n');
  await assert.rejects(waiting, /ended without data/);
});

test("a tap whose upstream fails before its first data fails the wait with the upstream's error", async () => {
  const { upstream, body } = sseTap();
  const waiting = firstData(body);
  upstream.destroy(new Error('upstream socket reset'));
  await assert.rejects(waiting, /upstream socket reset/);
});

test('a tap destroyed without an error before its first data fails the wait', async () => {
  const { body } = sseTap();
  const waiting = firstData(body);
  body.destroy();
  await assert.rejects(waiting, /closed before its first data/);
});

test('after its first data, the wait leaves no close or error listener of its own on the tap', async () => {
  const { upstream, body } = sseTap();
  const before = { close: body.listenerCount('close'), error: body.listenerCount('error') };
  const waiting = firstData(body);
  upstream.write('data: {"n":1}\n\n');
  await waiting;
  assert.deepEqual({ close: body.listenerCount('close'), error: body.listenerCount('error') }, before);
});

test('a body that is not a tap ends the wait with its first data, left buffered', async () => {
  const body = new PassThrough();
  const waiting = firstData(body);
  body.write('audio');
  await waiting;
  assert.equal(body.readableLength, 5);
});

test('a body that is not a tap and ends without data fails the wait', async () => {
  const empty = new PassThrough();
  const failing = firstData(empty);
  empty.end();
  await assert.rejects(failing, /ended without data/);
});
