import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import { createAccount } from '../../src/billing/accounts.js';
import { verifyWebhook } from '../../src/index.js';
import { setWebhookSecret } from '../../src/store/accounts.js';
import { openStore, type Store } from '../../src/store/open.js';
import { claimDueWebhooks, enqueueWebhook, findWebhook, type WebhookRow } from '../../src/store/webhook-outbox.js';
import { createWebhookDeliverer, type WebhookDelivererOptions, type WebhookLog } from '../../src/webhooks/deliverer.js';
import { type Receiver, startReceiver } from './receiver.js';

const T0 = 1_700_000_000_000; // ms; a whole second, so T0 / 1000 is the first timestamp
const SPEC_DELAYS = [5_000, 30_000, 300_000];
const payload = JSON.stringify({ task_id: 'task_1', status: 'succeeded', model: 'sandbox-video', video_url: 'https://files.example/v.mp4' });

interface Logged {
  level: string;
  fields: object;
  message: string;
}

function captureLog(): { log: WebhookLog; lines: Logged[] } {
  const lines: Logged[] = [];
  const at = (level: string) => (fields: object, message: string) => {
    lines.push({ level, fields, message });
  };
  return { lines, log: { info: at('info'), warn: at('warn'), error: at('error') } };
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('webhook deliverer', () => {
  let receiver: Receiver;
  let store: Store;
  let accountId: string;
  let secret: string;
  let clock: number;
  let logged: ReturnType<typeof captureLog>;
  const now = () => clock;

  before(async () => {
    receiver = await startReceiver();
  });
  after(() => receiver.close());
  beforeEach(async () => {
    receiver.received.length = 0;
    receiver.fallback = 200;
    store = await openStore('sqlite::memory:');
    const account = await createAccount(store, { name: 'hooks' });
    accountId = account.id;
    secret = account.webhook_secret;
    clock = T0;
    logged = captureLog();
  });
  afterEach(() => store.close());

  const deliverer = (options: Partial<WebhookDelivererOptions> = {}) =>
    createWebhookDeliverer({ store, retryDelaysMs: SPEC_DELAYS, timeoutMs: 2_000, allowPrivate: true, log: logged.log, now, ...options });
  const enqueue = (url = receiver.url()): Promise<WebhookRow> =>
    enqueueWebhook(store.db, { accountId, taskId: 'task_1', eventId: 'evt_1', url, payload, now: clock });

  test('a webhook answered 2xx on its first attempt is delivered, signed and labelled', async () => {
    const row = await enqueue();
    assert.equal(await deliverer().deliverDue(), 1);
    const [request] = receiver.received;
    assert.ok(request);
    assert.deepEqual(
      {
        path: request.path,
        body: request.rawBody,
        contentType: request.headers['content-type'],
        userAgent: request.headers['user-agent'],
        eventId: request.headers['x-service-event-id'],
        timestamp: request.headers['x-service-timestamp'],
      },
      { path: '/hook', body: payload, contentType: 'application/json', userAgent: 'tollroute-webhooks', eventId: 'evt_1', timestamp: String(T0 / 1000) },
    );
    assert.equal(verifyWebhook(secret, request.headers, request.rawBody, 300, now), true);
    assert.deepEqual(await findWebhook(store.db, row.id), {
      ...row,
      state: 'delivered',
      attempts: 1,
      last_status: 200,
      delivered_at: T0,
    });
    assert.equal(await deliverer().deliverDue(), 0);
  });

  test('the spec schedule: retries 5 s, 30 s and 5 min later, each signed at its own send time, then dropped', async () => {
    receiver.fallback = 500;
    const row = await enqueue();
    const d = deliverer();
    const seen: { at: number; valid: boolean }[] = [];
    const expectedAttemptAt = [T0, T0 + 5_000, T0 + 35_000, T0 + 335_000];
    for (const [i, at] of expectedAttemptAt.entries()) {
      clock = at - 1;
      assert.equal(await d.deliverDue(), 0, `attempt ${i + 1} must wait for its time`);
      clock = at;
      assert.equal(await d.deliverDue(), 1);
      const request = receiver.received[i]!;
      // what the receiver sees at arrival: valid within 300 s of this attempt's own send time
      seen.push({ at: Number(request.headers['x-service-timestamp']), valid: verifyWebhook(secret, request.headers, request.rawBody, 300, now) });
    }
    assert.deepEqual(
      seen,
      expectedAttemptAt.map((at) => ({ at: at / 1000, valid: true })),
    );
    assert.deepEqual(new Set(receiver.received.map((r) => r.headers['x-service-event-id'])), new Set(['evt_1']));
    assert.deepEqual(await findWebhook(store.db, row.id), {
      ...row,
      state: 'dropped',
      attempts: 4,
      next_attempt_at: T0 + 335_000,
      last_status: 500,
      last_error: 'receiver answered 500',
    });
    clock += 10 * 300_000;
    assert.equal(await d.deliverDue(), 0);
    assert.equal(receiver.received.length, 4);
    assert.deepEqual(
      logged.lines.map((l) => [l.level, l.message]),
      [
        ['warn', 'webhook attempt failed'],
        ['warn', 'webhook attempt failed'],
        ['warn', 'webhook attempt failed'],
        ['warn', 'webhook dropped after its last attempt'],
      ],
    );
    assert.ok(!JSON.stringify(logged.lines).includes(secret), 'the secret was logged');
  });

  test('the running loop works through shortened delays [50, 100, 200] to dropped after 4 attempts', async () => {
    receiver.fallback = 503;
    const row = await enqueue();
    const d = deliverer({ now: Date.now, retryDelaysMs: [50, 100, 200], pollIntervalMs: 10 });
    d.start();
    try {
      const final = await until(
        () => findWebhook(store.db, row.id),
        (r) => r?.state !== 'pending',
      );
      assert.deepEqual({ state: final?.state, attempts: final?.attempts, received: receiver.received.length }, { state: 'dropped', attempts: 4, received: 4 });
    } finally {
      await d.stop();
    }
    const arrivals = receiver.received.map((r) => r.arrivedAt);
    const gaps = arrivals.slice(1).map((at, i) => at - arrivals[i]!);
    gaps.forEach((gap, i) => assert.ok(gap >= [50, 100, 200][i]! - 2, `gap ${i + 1} was ${gap} ms`));
    assert.deepEqual(
      receiver.received.map((r) => r.headers['x-service-event-id']),
      ['evt_1', 'evt_1', 'evt_1', 'evt_1'],
    );
    assert.deepEqual(
      receiver.received.map((r) => verifyWebhook(secret, r.headers, r.rawBody)),
      [true, true, true, true],
    );
  });

  test('each recorded attempt is reported with its outcome and how long after its due time it started', async () => {
    receiver.script(500);
    await enqueue();
    const observed: [string, number][] = [];
    const d = deliverer({ metrics: { observeWebhookAttempt: (outcome, lateSeconds) => observed.push([outcome, lateSeconds]) } });
    clock = T0 + 1_500;
    await d.deliverDue();
    clock += 5_250; // the retry was due 5 s after the first attempt ended
    await d.deliverDue();
    assert.deepEqual(observed, [
      ['retry', 1.5],
      ['delivered', 0.25],
    ]);
  });

  test('a 302 is a failed attempt, and its Location is not followed', async () => {
    receiver.script((res) => res.writeHead(302, { location: receiver.url('/elsewhere') }).end());
    const row = await enqueue();
    await deliverer().deliverDue();
    assert.deepEqual(
      receiver.received.map((r) => r.path),
      ['/hook'],
    );
    assert.deepEqual(await findWebhook(store.db, row.id), {
      ...row,
      attempts: 1,
      next_attempt_at: T0 + 5_000,
      last_status: 302,
      last_error: 'receiver answered 302',
    });
  });

  test('a secret rotated between attempts signs the later attempts', async () => {
    receiver.script(500);
    await enqueue();
    const d = deliverer();
    await d.deliverDue();
    const rotated = 'whsec_rotated';
    assert.equal(await setWebhookSecret(store.db, { accountId, secret: rotated }), true);
    clock += 5_000;
    await d.deliverDue();
    const [first, second] = receiver.received;
    assert.ok(first && second);
    assert.deepEqual(
      [first, second].map((r) => [verifyWebhook(secret, r.headers, r.rawBody, 300, now), verifyWebhook(rotated, r.headers, r.rawBody, 300, now)]),
      [
        [true, false],
        [false, true],
      ],
    );
  });

  test('a receiver that does not answer within timeoutMs is a failed attempt', async () => {
    receiver.script('hang');
    const row = await enqueue();
    const started = Date.now();
    assert.equal(await deliverer({ timeoutMs: 200 }).deliverDue(), 1);
    const elapsed = Date.now() - started;
    assert.ok(elapsed >= 190 && elapsed < 2_000, `the attempt took ${elapsed} ms`);
    assert.deepEqual(await findWebhook(store.db, row.id), {
      ...row,
      attempts: 1,
      next_attempt_at: T0 + 5_000,
      last_error: 'RequestTimeoutError: no complete answer within 200 ms',
    });
  });

  test('without allowPrivate a loopback callback is refused, never sent, and counts as a failed attempt', async () => {
    const row = await enqueue();
    await deliverer({ allowPrivate: false }).deliverDue();
    assert.equal(receiver.received.length, 0);
    const stored = await findWebhook(store.db, row.id);
    assert.deepEqual(
      { state: stored?.state, attempts: stored?.attempts, error: stored?.last_error },
      {
        state: 'pending',
        attempts: 1,
        error: 'RefusedUrlError: callback_url: refused address 127.0.0.1 (loopback)',
      },
    );
  });

  test('a row leased by a deliverer that died is attempted again once the lease expires', async () => {
    const row = await enqueue();
    // the dead instance claimed it and never reported
    await claimDueWebhooks(store.db, { now: clock, leaseMs: 32_000, limit: 10, perReceiver: 4, dialect: store.dialect });
    const d = deliverer();
    assert.equal(await d.deliverDue(), 0);
    clock += 32_000;
    assert.equal(await d.deliverDue(), 1);
    assert.deepEqual({ state: (await findWebhook(store.db, row.id))?.state, received: receiver.received.length }, { state: 'delivered', received: 1 });
  });

  test('stop waits for the attempts in flight to be recorded', async () => {
    receiver.script((res) => setTimeout(() => res.writeHead(204).end(), 100));
    const row = await enqueue();
    const d = deliverer({ now: Date.now, pollIntervalMs: 10 });
    d.start();
    await receiver.waitFor(1);
    await d.stop();
    // the answer came 100 ms after arrival; stop returned only once the attempt was recorded
    assert.equal((await findWebhook(store.db, row.id))?.state, 'delivered');
  });
});
