// A channel's headers and body timeouts (timeouts.headers_ms and body_ms): a call fails with
// undici's own errors when its answer's headers, or the next bytes of its body, do not come in
// time, never before, and a call that keeps showing life is left alone. A request of the pool's own
// keeps them through undici's timers; an answer read as it comes (postJson) or whole (postForText)
// through the answer watch (answer-watch.ts).
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { answerWatch } from '../../src/upstreams/answer-watch.js';
import { postForText, postJson } from '../../src/upstreams/http.js';
import type { Upstream } from '../../src/upstreams/pool.js';
import { WaitBoundedPool } from '../../src/upstreams/wait-bounded-pool.js';

/**
 * Paths (a query names the test): /hang never answers; /stall sends headers and one chunk, then
 * nothing; /trickle a chunk every 100 ms, 15 in all; /json-trickle a JSON array of 12 numbers, a
 * part every 100 ms; /quick a JSON answer at once; /big 4 MiB at once.
 */
let server: Server;
let origin: string;
const closedSockets: string[] = [];
before(async () => {
  server = createServer((req, res: ServerResponse) => {
    req.resume();
    req.socket.once('close', () => closedSockets.push(req.url ?? ''));
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path === '/hang') return;
    res.writeHead(200, { 'content-type': 'text/plain' });
    if (path === '/stall') return void res.write('first');
    if (path === '/big') return void res.end(Buffer.alloc(4 << 20, 'x'));
    if (path === '/quick') return void res.end('{"done":true}');
    if (path === '/json-trickle') return void writeJsonTrickle(res);
    let sent = 0;
    const timer = setInterval(() => {
      res.write(`chunk ${++sent};`);
      if (sent === 15) {
        clearInterval(timer);
        res.end();
      }
    }, 100);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => server.close());

function writeJsonTrickle(res: ServerResponse) {
  let sent = 0;
  const timer = setInterval(() => {
    res.write(sent === 0 ? '[0' : `,${sent}`);
    if (++sent === 12) {
      clearInterval(timer);
      res.end(']');
    }
  }, 100);
}

/** Runs `use` on a pool with these timeouts, then destroys the pool. */
async function withPool(headersTimeout: number, bodyTimeout: number, use: (pool: WaitBoundedPool) => Promise<void>) {
  const pool = new WaitBoundedPool(origin, { channel: 'test-channel', connections: 4, maxWaitMs: 1_000, headersTimeout, bodyTimeout });
  try {
    await use(pool);
  } finally {
    await pool.destroy();
  }
}

/** The pool as a channel's upstream, for postForText. */
const upstreamOf = (pool: WaitBoundedPool): Upstream => ({ name: 'test-channel', channel: {} as Upstream['channel'], pool, basePath: '' });

/** A GET of `path` on the pool, its body read to the end as a stream. */
const readStreamed = async (pool: WaitBoundedPool, path: string, signal: AbortSignal) => (await pool.request({ method: 'GET', path, signal })).body.text();

/** A POST of `path` read whole (postForText). */
const readWhole = (pool: WaitBoundedPool, path: string, signal: AbortSignal) => postForText(upstreamOf(pool), { path, body: {}, signal });

/** A POST of `path` read as it comes (postJson), its body to the end. */
const readPosted = async (pool: WaitBoundedPool, path: string, signal: AbortSignal) =>
  (await postJson(upstreamOf(pool), { path, body: {}, signal })).body.text();

/** The error a call of `path` ends with, read as `read` reads it, and after how long. */
async function failureOf(pool: WaitBoundedPool, path: string, read = readStreamed): Promise<{ code: unknown; ms: number }> {
  const started = performance.now();
  try {
    // a test that would otherwise wait for ever fails here instead
    await read(pool, path, AbortSignal.timeout(5_000));
  } catch (error) {
    return { code: (error as { code?: unknown }).code, ms: performance.now() - started };
  }
  assert.fail(`${path} was answered in full`);
}

/** A call of `path` on a pool with a 300 ms headers timeout fails with undici's headers timeout, past the bound, and its connection is closed. */
async function assertHeadersTimedOut(pool: WaitBoundedPool, path: string, read: typeof readStreamed) {
  const { code, ms } = await failureOf(pool, path, read);
  assert.equal(code, 'UND_ERR_HEADERS_TIMEOUT');
  assert.ok(ms >= 300, `not before the bound: ${ms} ms`);
  assert.ok(ms < 2_500, `soon after the bound, give or take a loaded machine: ${ms} ms`);
  await sleep(50);
  assert.ok(closedSockets.includes(path));
}

// Side by side: each test has a pool of its own and its own paths, and a pool's own requests keep
// their timeouts in undici, not in the process-wide answer watch the later suites count.
describe('a channel pool’s timeouts', { concurrency: true }, () => {
  test('a call whose answer’s headers do not come within the headers timeout fails with undici’s headers timeout, and its connection is closed', () =>
    withPool(300, 60_000, (pool) => assertHeadersTimedOut(pool, '/hang', readStreamed)));

  test('a body that stops coming fails with undici’s body timeout once it has been quiet for the body timeout', () =>
    withPool(60_000, 300, async (pool) => {
      const { code, ms } = await failureOf(pool, '/stall');
      assert.equal(code, 'UND_ERR_BODY_TIMEOUT');
      assert.ok(ms >= 300, `not before the bound: ${ms} ms`);
    }));

  test('a body that keeps coming is not timed out, however long it takes in all', () =>
    withPool(60_000, 300, async (pool) => {
      const res = await pool.request({ method: 'GET', path: '/trickle' });
      const text = await res.body.text(); // 1.5 s in all, never 300 ms quiet
      assert.equal(text.split(';').filter(Boolean).length, 15);
    }));

  test('an answer its reader holds back is not timed out while the reader holds it', () =>
    withPool(60_000, 300, async (pool) => {
      const res = await pool.request({ method: 'GET', path: '/big' });
      const reader = res.body[Symbol.asyncIterator]();
      let bytes = ((await reader.next()).value as Buffer).length;
      await sleep(1_200); // undici has paused the connection: the rest waits, unread
      for (let next = await reader.next(); !next.done; next = await reader.next()) bytes += (next.value as Buffer).length;
      assert.equal(bytes, 4 << 20);
    }));

  test('a call answered in time is not timed out afterwards', () =>
    withPool(300, 300, async (pool) => {
      const res = await pool.request({ method: 'GET', path: '/trickle?left-alone' });
      assert.equal(res.statusCode, 200);
      await res.body.text();
      await sleep(700); // past both bounds: a timer left running would abort it now, its socket closed
      assert.ok(!closedSockets.includes('/trickle?left-alone'), 'its connection stays open for the next call');
    }));
});

describe('an answer read whole keeps its channel’s timeouts', () => {
  test('one whose headers do not come within the headers timeout fails with undici’s headers timeout, and its connection is closed', () =>
    withPool(300, 60_000, (pool) => assertHeadersTimedOut(pool, '/hang?whole', readWhole)));

  test('one whose body stops coming fails with undici’s body timeout once it has been quiet for the body timeout', () =>
    withPool(60_000, 300, async (pool) => {
      const { code, ms } = await failureOf(pool, '/stall?whole', readWhole);
      assert.equal(code, 'UND_ERR_BODY_TIMEOUT');
      assert.ok(ms >= 300, `not before the bound: ${ms} ms`);
      assert.ok(ms < 2_500, `soon after the bound: ${ms} ms`);
    }));

  test('one whose body keeps coming is not timed out, however long it takes in all', () =>
    withPool(60_000, 300, async (pool) => {
      const text = await readWhole(pool, '/json-trickle', new AbortController().signal); // 1.2 s, never 300 ms quiet
      assert.deepEqual(JSON.parse(text), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    }));

  test('one answered in time is not timed out afterwards, and leaves the watch', () =>
    withPool(300, 300, async (pool) => {
      assert.equal(await readWhole(pool, '/quick?left-alone', new AbortController().signal), '{"done":true}');
      assert.equal(answerWatch.size, 0);
      await sleep(700); // past both bounds: a deadline left behind would abort it now, its socket closed
      assert.ok(!closedSockets.includes('/quick?left-alone'), 'its connection stays open for the next call');
    }));

  test('a timeout of 0 is none, as in undici', () =>
    withPool(0, 0, async (pool) => {
      const text = await readWhole(pool, '/json-trickle?untimed', new AbortController().signal);
      assert.equal(JSON.parse(text).length, 12);
    }));
});

describe('an answer read as it comes keeps its channel’s timeouts', () => {
  test('one whose headers do not come within the headers timeout fails with undici’s headers timeout, and its connection is closed', () =>
    withPool(300, 60_000, (pool) => assertHeadersTimedOut(pool, '/hang?posted', readPosted)));

  test('one whose body stops coming fails with undici’s body timeout once it has been quiet for the body timeout', () =>
    withPool(60_000, 300, async (pool) => {
      const { code, ms } = await failureOf(pool, '/stall?posted', readPosted);
      assert.equal(code, 'UND_ERR_BODY_TIMEOUT');
      assert.ok(ms >= 300, `not before the bound: ${ms} ms`);
      assert.ok(ms < 2_500, `soon after the bound: ${ms} ms`);
      await sleep(50);
      assert.ok(closedSockets.includes('/stall?posted'));
    }));

  test('one whose body keeps coming is not timed out, however long it takes in all', () =>
    withPool(60_000, 300, async (pool) => {
      const text = await readPosted(pool, '/trickle?posted', new AbortController().signal); // 1.5 s, never 300 ms quiet
      assert.equal(text.split(';').filter(Boolean).length, 15);
    }));

  test('one its reader holds back is not timed out while the reader holds it', () =>
    withPool(60_000, 300, async (pool) => {
      const { body } = await postJson(upstreamOf(pool), { path: '/big?posted', body: {}, signal: new AbortController().signal });
      const reader = body[Symbol.asyncIterator]();
      let bytes = ((await reader.next()).value as Buffer).length;
      await sleep(1_200); // the body is full and reading has stopped: the rest waits, unread
      for (let next = await reader.next(); !next.done; next = await reader.next()) bytes += (next.value as Buffer).length;
      assert.equal(bytes, 4 << 20);
    }));

  test('one answered in time is not timed out afterwards, and leaves the watch', () =>
    withPool(300, 300, async (pool) => {
      assert.equal(await readPosted(pool, '/quick?posted-left-alone', new AbortController().signal), '{"done":true}');
      assert.equal(answerWatch.size, 0);
      await sleep(700); // past both bounds: a deadline left behind would abort it now, its socket closed
      assert.ok(!closedSockets.includes('/quick?posted-left-alone'), 'its connection stays open for the next call');
    }));
});
