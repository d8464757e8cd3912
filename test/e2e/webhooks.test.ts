// Webhook delivery through a running gateway: the retry schedule (shortened), the drop after
// four attempts, rotation, a restart mid-schedule, and the URL policy on callback_url and file_url.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import { listWebhooksForTask } from '../../src/store/webhook-outbox.js';
import { ADMIN_AUTH, eventually, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { type Receiver, startReceiver } from '../helpers/receiver.js';

const RETRY_DELAYS_MS = [150, 300, 450];

describe('webhook delivery', () => {
  let gw: TestGateway;
  let receiver: Receiver;
  before(async () => {
    gw = await startTestGateway({ webhooks: { retry_delays_ms: RETRY_DELAYS_MS, timeout_ms: 2_000 } });
    receiver = await startReceiver();
  });
  after(async () => {
    await gw.close();
    await receiver.close();
  });

  const videoWithCallback = async () => {
    const { accountId, key } = await gw.account({ creditMicros: 5_000_000 });
    receiver.secret = (await gw.admin('GET', `/admin/accounts/${accountId}/webhook-secret`)).body.secret;
    const created = await gw.call(key, 'POST', '/v1/videos/generations', {
      model: 'sandbox-video',
      content: [{ type: 'text', text: 'hook' }],
      callback_url: receiver.url,
    });
    return { accountId, key, taskId: created.body.id as string };
  };

  test('a receiver failing three times gets the event a fourth time, on the retry schedule, each attempt signed anew', async () => {
    receiver.answers.push(500, 503, 302);
    const { taskId } = await videoWithCallback();
    const attempts = await eventually(() => {
      const mine = receiver.deliveries.filter((d) => d.payload.task_id === taskId);
      return mine.length === 4 && mine;
    }, 10_000);
    assert.ok(
      attempts.every((d) => d.verified),
      'every attempt verifies',
    );
    assert.equal(new Set(attempts.map((d) => d.headers['x-service-event-id'])).size, 1, 'one event id across attempts');
    assert.deepEqual(new Set(attempts.map((d) => d.rawBody)).size, 1, 'the same payload each time');
    const gaps = attempts.slice(1).map((d, i) => d.receivedAt - attempts[i]!.receivedAt);
    gaps.forEach((gap, i) => assert.ok(gap >= RETRY_DELAYS_MS[i]! - 20, `gap ${i + 1} was ${gap} ms, expected about ${RETRY_DELAYS_MS[i]} ms`));
    // The outbox records an attempt just after the receiver has answered it.
    const row = await eventually(async () => {
      const [outbox] = await listWebhooksForTask(gw.gateway.store.db, taskId);
      return outbox?.state !== 'pending' && outbox;
    });
    assert.deepEqual({ state: row.state, attempts: row.attempts }, { state: 'delivered', attempts: 4 });
  });

  test('after four failed attempts the event is dropped, and the task stays readable', async () => {
    receiver.answers.push(500, 500, 500, 500);
    const { key, taskId } = await videoWithCallback();
    const row = await eventually(async () => {
      const [outbox] = await listWebhooksForTask(gw.gateway.store.db, taskId);
      return outbox?.state === 'dropped' && outbox;
    }, 10_000);
    assert.equal(row.attempts, 4);
    assert.equal(receiver.deliveries.filter((d) => d.payload.task_id === taskId).length, 4);
    assert.equal((await gw.call(key, 'GET', `/v1/videos/generations/${taskId}`)).body.status, 'succeeded');
  });

  test('a rotated secret signs the deliveries after the rotation', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 5_000_000 });
    const rotated = (await gw.admin('POST', `/admin/accounts/${accountId}/webhook-secret`)).body.secret;
    receiver.secret = rotated;
    const created = await gw.call(key, 'POST', '/v1/images/async', { model: 'sandbox-image', prompt: 'rotated', callback_url: receiver.url });
    const delivery = await eventually(() => receiver.deliveries.find((d) => d.payload.task_id === created.body.id));
    assert.equal(delivery.verified, true);
  });

  test('subtitle erase and minutes tasks call back too, with their own task_type', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 10_000_000 });
    receiver.secret = (await gw.admin('GET', `/admin/accounts/${accountId}/webhook-secret`)).body.secret;
    const video = await gw.call(key, 'POST', '/v1/videos/generations', { model: 'sandbox-video', content: [{ type: 'text', text: 'source' }] });
    await eventually(async () => (await gw.call(key, 'GET', `/v1/videos/generations/${video.body.id}`)).body.status === 'succeeded');
    const erase = await gw.call(key, 'POST', '/v1/videos/erase-subtitle', { video_task_id: video.body.id, callback_url: receiver.url });
    const minutes = await gw.call(key, 'POST', '/v1/audio/minutes', {
      model: 'vendor-minutes',
      file_url: 'https://media.example.com/m.mp3?duration_s=20',
      all_activate: true,
      callback_url: receiver.url,
    });
    const erased = await eventually(() => receiver.deliveries.find((d) => d.payload.task_id === erase.body.id));
    const minuted = await eventually(() => receiver.deliveries.find((d) => d.payload.task_id === minutes.body.id));
    assert.ok(erased.verified && minuted.verified);
    assert.deepEqual({ type: erased.payload.task_type, status: erased.payload.status }, { type: 'erase_subtitle', status: 'succeeded' });
    assert.match(erased.payload.video_url, /\.mp4$/);
    assert.deepEqual(
      { type: minuted.payload.task_type, url: minuted.payload.result_url },
      { type: 'minutes', url: `${gw.url}/v1/audio/minutes/${minutes.body.id}` },
    );
  });

  test('Idempotency-Key on task creation returns the first task and holds funds once', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 5_000_000 });
    const body = { model: 'sandbox-video', content: [{ type: 'text', text: 'once' }] };
    const first = await gw.call(key, 'POST', '/v1/videos/generations', body, { 'idempotency-key': 'video-1' });
    const second = await gw.call(key, 'POST', '/v1/videos/generations', body, { 'idempotency-key': 'video-1' });
    assert.deepEqual(second, first);
    const ledger = (await gw.admin('GET', `/admin/accounts/${accountId}/ledger`)).body.data;
    assert.equal(ledger.filter((row: any) => row.kind === 'hold').length, 1);
  });
});

describe('user-supplied URLs with private targets refused', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway({ network: { allow_private_urls: false } });
  });
  after(() => gw.close());

  for (const [field, path, body] of [
    ['callback_url', '/v1/videos/generations', { model: 'sandbox-video', content: [{ type: 'text', text: 'x' }], callback_url: 'http://127.0.0.1:9/hook' }],
    ['callback_url', '/v1/images/async', { model: 'sandbox-image', prompt: 'x', callback_url: 'http://169.254.169.254/latest/meta-data' }],
    ['file_url', '/v1/audio/minutes', { model: 'vendor-minutes', file_url: 'http://10.0.0.8/a.mp3', all_activate: true }],
    ['callback_url', '/v1/images/async', { model: 'sandbox-image', prompt: 'x', callback_url: 'http://[::ffff:127.0.0.1]/hook' }],
  ] as const) {
    test(`${field} ${JSON.stringify((body as any)[field])} is refused with 400 and nothing held`, async () => {
      const { accountId, key } = await gw.account({ creditMicros: 10_000_000 });
      const res = await gw.call(key, 'POST', path, body);
      assert.equal(res.status, 400);
      assert.equal(res.body.type, 'invalid_request_error');
      assert.match(res.body.error, new RegExp(`^${field}: `));
      assert.equal((await gw.balance(accountId)).balance_micros, 10_000_000);
    });
  }

  test('a host name that resolves to a loopback address is refused', async () => {
    const { key } = await gw.account();
    const res = await gw.call(key, 'POST', '/v1/images/async', { model: 'sandbox-image', prompt: 'x', callback_url: 'http://localtest.me.localhost/hook' });
    assert.equal(res.status, 400);
    assert.match(res.body.error, /^callback_url: refused address/);
  });

  test('a callback_url whose host does not resolve now is accepted: it is judged when the callback is sent', async () => {
    const { key } = await gw.account();
    // `.invalid` never resolves (RFC 6761): as a DNS failure at creation would
    const res = await gw.call(key, 'POST', '/v1/images/async', { model: 'sandbox-image', prompt: 'x', callback_url: 'https://hooks.tollroute.invalid/done' });
    assert.equal(res.status, 200);
    assert.equal(res.body.status, 'queued');
  });

  test('a callback_url with credentials in it is refused', async () => {
    const { key } = await gw.account();
    const res = await gw.call(key, 'POST', '/v1/images/async', { model: 'sandbox-image', prompt: 'x', callback_url: 'https://user:pass@example.com/hook' });
    assert.equal(res.status, 400);
    assert.match(res.body.error, /^callback_url: /);
  });
});

describe('webhook delivery across a gateway restart', () => {
  // the restart happens inside the long middle delay, so no attempt falls due while nothing runs
  const delays = [400, 3_000, 400];
  let receiver: Receiver;
  before(async () => {
    receiver = await startReceiver();
  });
  after(() => receiver.close());

  test('a gateway stopped mid-schedule and a new one on the same store make the remaining attempts: four in all, each within 1 s of its due time', async (t) => {
    const webhooks = { retry_delays_ms: delays, timeout_ms: 2_000 };
    const first = await startTestGateway({ webhooks });
    const dataDir = path.dirname(first.storeUrl.slice('sqlite:'.length));
    const { accountId, key } = await first.account({ creditMicros: 5_000_000 });
    receiver.secret = (await first.admin('GET', `/admin/accounts/${accountId}/webhook-secret`)).body.secret;
    receiver.answers.push(500, 500, 500, 500);
    const created = await first.call(key, 'POST', '/v1/videos/generations', {
      model: 'sandbox-video',
      content: [{ type: 'text', text: 'restart' }],
      callback_url: receiver.url,
    });
    const mine = () => receiver.deliveries.filter((d) => d.payload.task_id === created.body.id);
    await eventually(() => mine().length === 2, 10_000);
    await first.gateway.close();
    await first.sandbox.close();

    // the second instance removes the data directory when it closes
    const second = await startTestGateway({ webhooks, store: first.storeUrl, data_dir: dataDir });
    try {
      await eventually(() => mine().length === 4, 10_000);
      const row = await eventually(async () => {
        const [outbox] = await listWebhooksForTask(second.gateway.store.db, created.body.id);
        return outbox?.state === 'dropped' && outbox;
      });
      assert.equal(row.attempts, 4);
      // the second instance made attempts 3 and 4, and reports them
      const metrics = await (await request(`${second.url}/metrics`, ADMIN_AUTH)).body.text();
      assert.deepEqual(metrics.match(/^tollroute_webhook_attempt_lateness_seconds_count\{.*$/gm), [
        'tollroute_webhook_attempt_lateness_seconds_count{outcome="retry"} 1',
        'tollroute_webhook_attempt_lateness_seconds_count{outcome="dropped"} 1',
      ]);
    } finally {
      await second.close();
    }
    const attempts = mine();
    assert.equal(attempts.length, 4, 'no attempt lost or made twice');
    assert.ok(
      attempts.every((d) => d.verified),
      'every attempt verifies',
    );
    assert.equal(new Set(attempts.map((d) => d.headers['x-service-event-id'])).size, 1, 'one event id across the restart');
    // each attempt is due `delay` after the previous one ended, so gap - delay bounds its lateness
    const late = attempts.slice(1).map((d, i) => d.receivedAt - attempts[i]!.receivedAt - delays[i]!);
    t.diagnostic(`retry lateness across the restart (ms, at most): ${late.join(', ')}`);
    late.forEach((ms, i) => assert.ok(ms >= -20 && ms <= 1_000, `attempt ${i + 2} came ${ms} ms after its delay`));
  });
});
