// An answer read whole (postForText) keeps its channel's headers and body timeouts through the
// answer watch instead of undici's timers: the same errors, never before their bound, and a call
// that keeps showing life, or has been answered, is left alone.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { AnswerWatch, answerWatch, type WatchedAnswer } from '../../src/upstreams/answer-watch.js';
import { postForText } from '../../src/upstreams/http.js';
import type { Upstream } from '../../src/upstreams/pool.js';
import { WaitBoundedPool } from '../../src/upstreams/wait-bounded-pool.js';

/** /hang never answers; /stall sends headers and a first part, then nothing; /trickle a part every 100 ms, 12 in all; /quick at once. */
let server: Server;
let origin: string;
const closedSockets: string[] = [];
before(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.socket.once('close', () => closedSockets.push(req.url ?? ''));
    if (req.url === '/hang') return;
    res.writeHead(200, { 'content-type': 'application/json' });
    if (req.url === '/stall') return void res.write('{"part":');
    if (req.url?.startsWith('/quick')) return void res.end('{"done":true}');
    let sent = 0;
    const timer = setInterval(() => {
      res.write(sent === 0 ? '[0' : `,${sent}`);
      if (++sent === 12) {
        clearInterval(timer);
        res.end(']');
      }
    }, 100);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => server.close());

async function withUpstream(headersTimeout: number, bodyTimeout: number, use: (upstream: Upstream) => Promise<void>) {
  const pool = new WaitBoundedPool(origin, { channel: 'test-channel', connections: 4, maxWaitMs: 1_000, headersTimeout, bodyTimeout });
  try {
    await use({ name: 'test-channel', channel: {} as Upstream['channel'], pool, basePath: '' });
  } finally {
    await pool.destroy();
  }
}

/** The error a POST of `path` ends with, and after how long. */
async function failureOf(upstream: Upstream, path: string): Promise<{ code: unknown; ms: number }> {
  const started = performance.now();
  try {
    await postForText(upstream, { path, body: {}, signal: AbortSignal.timeout(5_000) });
  } catch (error) {
    return { code: (error as { code?: unknown }).code, ms: performance.now() - started };
  }
  assert.fail(`${path} was answered in full`);
}

describe('an answer read whole keeps its channel’s timeouts', () => {
  test('one whose headers do not come within the headers timeout fails with undici’s headers timeout, and its connection is closed', () =>
    withUpstream(300, 60_000, async (upstream) => {
      const { code, ms } = await failureOf(upstream, '/hang');
      assert.equal(code, 'UND_ERR_HEADERS_TIMEOUT');
      assert.ok(ms >= 300, `not before the bound: ${ms} ms`);
      assert.ok(ms < 2_500, `soon after the bound, give or take a loaded machine: ${ms} ms`);
      await sleep(50);
      assert.ok(closedSockets.includes('/hang'));
    }));

  test('one whose body stops coming fails with undici’s body timeout once it has been quiet for the body timeout', () =>
    withUpstream(60_000, 300, async (upstream) => {
      const { code, ms } = await failureOf(upstream, '/stall');
      assert.equal(code, 'UND_ERR_BODY_TIMEOUT');
      assert.ok(ms >= 300, `not before the bound: ${ms} ms`);
      assert.ok(ms < 2_500, `soon after the bound: ${ms} ms`);
    }));

  test('one whose body keeps coming is not timed out, however long it takes in all', () =>
    withUpstream(60_000, 300, async (upstream) => {
      const text = await postForText(upstream, { path: '/trickle', body: {}, signal: new AbortController().signal }); // 1.2 s, never 300 ms quiet
      assert.deepEqual(JSON.parse(text), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    }));

  test('one answered in time is not timed out afterwards, and leaves the watch', () =>
    withUpstream(300, 300, async (upstream) => {
      assert.equal(await postForText(upstream, { path: '/quick?left-alone', body: {}, signal: new AbortController().signal }), '{"done":true}');
      assert.equal(answerWatch.size, 0);
      await sleep(700); // past both bounds: a deadline left behind would abort it now, its socket closed
      assert.ok(!closedSockets.includes('/quick?left-alone'), 'its connection stays open for the next call');
    }));

  test('a timeout of 0 is none, as in undici', () =>
    withUpstream(0, 0, async (upstream) => {
      const text = await postForText(upstream, { path: '/trickle?untimed', body: {}, signal: new AbortController().signal });
      assert.equal(JSON.parse(text).length, 12);
    }));
});

describe('the answer watch', () => {
  const answer = (deadline: number, expired: string[], name: string): WatchedAnswer => ({
    deadline,
    expire: () => expired.push(name),
    previous: undefined,
    next: undefined,
    watched: false,
  });

  test('expires the answers past their deadline, and only those, once each', () => {
    const watch = new AnswerWatch(60_000);
    const expired: string[] = [];
    const [early, late, never] = [answer(100, expired, 'early'), answer(300, expired, 'late'), answer(Number.POSITIVE_INFINITY, expired, 'never')];
    for (const a of [early, late, never]) watch.watch(a);
    watch.sweep(99);
    assert.deepEqual(expired, []);
    watch.sweep(100);
    assert.deepEqual(expired, ['early']);
    watch.sweep(1_000);
    watch.sweep(2_000);
    assert.deepEqual(expired, ['early', 'late']);
    assert.equal(watch.size, 1);
    watch.unwatch(never);
    watch.sweep(3_000);
  });

  test('forgets an answer unwatched from anywhere in its list', () => {
    const watch = new AnswerWatch(60_000);
    const expired: string[] = [];
    const answers = ['a', 'b', 'c', 'd'].map((name) => answer(0, expired, name));
    for (const a of answers) watch.watch(a);
    watch.unwatch(answers[2]!); // the middle
    watch.unwatch(answers[3]!); // the first (the newest is first)
    watch.unwatch(answers[3]!); // twice is once
    assert.equal(watch.size, 2);
    watch.sweep(1);
    assert.deepEqual(expired.sort(), ['a', 'b']);
    assert.equal(watch.size, 0);
  });
});
