// A channel's pool: calls past its connections wait in a queue of ours, measured and bounded, and a
// call that gives up while queued is never sent.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { type ConnectionWaitObserver, ConnectionWaitTimeoutError, WaitBoundedPool } from '../../src/upstreams/wait-bounded-pool.js';

/** A server answering each request `?delay=ms` later, counting requests and connections. */
let server: Server;
let origin: string;
let requests = 0;
let connections = 0;
before(async () => {
  server = createServer((req, res) => {
    requests++;
    const delayMs = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('delay') ?? 0);
    setTimeout(() => res.end('ok'), delayMs);
  });
  server.on('connection', () => void connections++);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => server.close());

function recorder() {
  const waits: number[] = [];
  let timeouts = 0;
  const observer: ConnectionWaitObserver = {
    observeConnectionWait: (channel, seconds) => {
      assert.equal(channel, 'test-channel');
      waits.push(seconds * 1000);
    },
    countConnectionWaitTimeout: () => void timeouts++,
  };
  return { observer, waits, timeouts: () => timeouts };
}

function poolFor(opts: { connections: number; maxWaitMs: number; observer?: ConnectionWaitObserver }) {
  return new WaitBoundedPool(origin, { channel: 'test-channel', keepAliveTimeout: 30_000, ...opts });
}

async function get(pool: WaitBoundedPool, delayMs: number, signal?: AbortSignal) {
  const res = await pool.request({ method: 'GET', path: `/?delay=${delayMs}`, signal });
  return res.body.text();
}

test('a call past the pool’s connections waits for one, and the wait is measured', async () => {
  const { observer, waits } = recorder();
  const pool = poolFor({ connections: 1, maxWaitMs: 5_000, observer });
  try {
    const first = get(pool, 400);
    const second = get(pool, 0);
    assert.equal(pool.waiting, 1);
    assert.deepEqual(await Promise.all([first, second]), ['ok', 'ok']);
    assert.equal(waits.length, 2);
    const [firstWait, secondWait] = waits as [number, number];
    // the second waited for the first's 400 ms answer; margins for a busy machine
    assert.ok(firstWait < 300, `first waited ${firstWait} ms`);
    assert.ok(secondWait >= 350 && secondWait < 3_000, `second waited ${secondWait} ms`);
  } finally {
    await pool.close();
  }
});

test('a call that waits past the bound fails unsent, and the connection it waited for stays up', async () => {
  const { observer, waits, timeouts } = recorder();
  const pool = poolFor({ connections: 1, maxWaitMs: 150, observer });
  const requestsBefore = requests;
  const connectionsBefore = connections;
  try {
    const first = get(pool, 1_000);
    const startedAt = performance.now();
    const refused = await get(pool, 0).then(
      () => undefined,
      (error: unknown) => error,
    );
    const waitedMs = performance.now() - startedAt;
    assert.ok(refused instanceof ConnectionWaitTimeoutError, String(refused));
    assert.equal(refused.channel, 'test-channel');
    assert.ok(waitedMs >= 140 && waitedMs < 900, `refused after ${waitedMs} ms`);
    assert.equal(timeouts(), 1);
    assert.equal(await first, 'ok');
    assert.equal(await get(pool, 0), 'ok'); // the pool goes on, on the same keep-alive connection
    assert.equal(requests - requestsBefore, 2, 'the refused call never reached the server');
    assert.equal(connections - connectionsBefore, 1);
    assert.equal(waits.length, 3); // the first, the refused one (its whole wait) and the last
  } finally {
    await pool.close();
  }
});

test('a caller who leaves while queued is answered at once, and the call is never sent', async () => {
  const pool = poolFor({ connections: 1, maxWaitMs: 10_000 });
  const requestsBefore = requests;
  try {
    const first = get(pool, 600);
    const controller = new AbortController();
    const queued = get(pool, 0, controller.signal).then(
      () => undefined,
      (error: unknown) => error,
    );
    const startedAt = performance.now();
    setTimeout(() => controller.abort(), 50);
    const error = await queued;
    assert.equal((error as Error).name, 'LeftBeforeSendError', 'marked as never sent, so it is billed nothing');
    assert.equal(((error as Error).cause as Error).name, 'AbortError');
    assert.ok(performance.now() - startedAt < 400, 'answered when the caller left, not when a connection freed');
    assert.equal(pool.waiting, 0);
    assert.equal(await first, 'ok');
    assert.equal(requests - requestsBefore, 1);
  } finally {
    await pool.close();
  }
});

test('the queue is first come, first served, and each freed connection takes the next call', async () => {
  const pool = poolFor({ connections: 2, maxWaitMs: 5_000 });
  try {
    const order: number[] = [];
    const calls = Array.from({ length: 6 }, (_, i) => get(pool, 150).then(() => void order.push(i)));
    assert.equal(pool.waiting, 4);
    await Promise.all(calls);
    assert.deepEqual(order.slice(0, 2).sort(), [0, 1]);
    assert.deepEqual(order.slice(2, 4).sort(), [2, 3]);
    assert.deepEqual(order.slice(4).sort(), [4, 5]);
  } finally {
    await pool.close();
  }
});
