// Video generation end to end on both paths: routing, validation, billing by duration, refunds,
// cancellation and the terminal-state webhook.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { eventually, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { type Receiver, startReceiver } from '../helpers/receiver.js';

const PRICE_PER_SECOND = 100_000;
const prompt = [{ type: 'text', text: 'a car passes a toll gate' }];

describe('video generation', () => {
  let gw: TestGateway;
  let receiver: Receiver;
  before(async () => {
    // Upstream tasks stay queued for a third of this: long enough to cancel one.
    gw = await startTestGateway({}, { sandboxTaskMs: 900 });
    receiver = await startReceiver();
  });
  after(async () => {
    await gw.close();
    await receiver.close();
  });
  beforeEach(() => gw.sandboxControl('DELETE', '/__sandbox/faults'));

  const finished = (key: string, id: string) =>
    eventually(async () => {
      const { body } = await gw.call(key, 'GET', `/v1/videos/generations/${id}`);
      return ['succeeded', 'failed', 'cancelled'].includes(body.status) && body;
    });

  test('the gateway path wraps the upstream id, succeeds with a video and bills its seconds', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 5_000_000 });
    const created = await gw.call(key, 'POST', '/v1/videos/generations', { model: 'sandbox-video', content: prompt, duration: 5 });
    assert.equal(created.status, 200);
    assert.deepEqual(Object.keys(created.body).sort(), ['created_at', 'id', 'model', 'status', 'upstream_id']);
    assert.match(created.body.upstream_id, /^cgt-/);
    assert.match(created.body.id, /^vid_/);
    assert.equal((await gw.balance(accountId)).held_micros, 5 * PRICE_PER_SECOND);

    const done = await finished(key, created.body.id);
    assert.equal(done.status, 'succeeded');
    assert.match(done.result.video_url, /\.mp4$/);
    assert.equal(done.upstream_id, created.body.upstream_id);
    assert.ok(done.finished_at && done.updated_at);
    assert.deepEqual(await gw.balance(accountId), { ...(await gw.balance(accountId)), balance_micros: 5_000_000 - 5 * PRICE_PER_SECOND, held_micros: 0 });
  });

  test('the ARK-compatible path answers the upstream shape with id = upstream id, under every prefix', async () => {
    const { key } = await gw.account({ creditMicros: 5_000_000 });
    for (const prefix of ['/api/v3', '/v3', '/api/v1', '/v1']) {
      const created = await gw.call(key, 'POST', `${prefix}/contents/generations/tasks`, { model: 'sandbox-video', content: prompt });
      assert.equal(created.status, 200, prefix);
      assert.deepEqual(Object.keys(created.body).sort(), ['created_at', 'id', 'model', 'status']);
      assert.match(created.body.id, /^cgt-/);
    }
  });

  test('both GETs accept either id; the ARK GET returns the upstream record', async () => {
    const { key } = await gw.account({ creditMicros: 5_000_000 });
    const created = await gw.call(key, 'POST', '/api/v3/contents/generations/tasks', { model: 'sandbox-video', content: prompt, return_last_frame: true });
    const upstreamId = created.body.id;
    const gatewayView = await finished(key, upstreamId);
    const ark = await gw.call(key, 'GET', `/api/v3/contents/generations/tasks/${gatewayView.id}`);
    assert.equal(ark.body.id, upstreamId);
    assert.equal(ark.body.status, 'succeeded');
    assert.equal(ark.body.content.video_url, gatewayView.result.video_url);
    assert.equal(ark.body.content.last_frame_url, gatewayView.result.last_frame_url);
    assert.equal(ark.body.framespersecond, 24);
    assert.equal(ark.body.created_at, created.body.created_at, 'the same instant in the same form as the creation answer');
    assert.ok(!Number.isNaN(Date.parse(ark.body.updated_at)));
  });

  test("duration -1 holds the model's longest video and settles on the real length", async () => {
    const { accountId, key } = await gw.account({ creditMicros: 5_000_000 });
    const created = await gw.call(key, 'POST', '/v1/videos/generations', { model: 'sandbox-video', content: prompt, duration: -1 });
    assert.equal((await gw.balance(accountId)).held_micros, 15 * PRICE_PER_SECOND);
    const done = await finished(key, created.body.id);
    assert.equal(done.result.duration_seconds, 12);
    assert.equal((await gw.balance(accountId)).balance_micros, 5_000_000 - 12 * PRICE_PER_SECOND);
  });

  test('what reaches the upstream is the ARK body with defaults applied and no callback_url', async () => {
    const { key } = await gw.account({ creditMicros: 5_000_000 });
    await gw.sandboxControl('DELETE', '/__sandbox/requests');
    await gw.call(key, 'POST', '/v1/videos/generations', {
      model: 'sandbox-video',
      content: prompt,
      callback_url: receiver.url,
      safety_identifier: 'user-hash',
    });
    const [sent] = (await gw.sandboxControl('GET', '/__sandbox/requests')).data;
    assert.deepEqual(sent.body, {
      model: 'sandbox-video',
      content: prompt,
      resolution: '720p',
      ratio: 'adaptive',
      duration: 5,
      safety_identifier: 'user-hash',
    });
    assert.equal(sent.headers.authorization, 'Bearer sk-sandbox');
  });

  for (const [name, body, message] of [
    [
      'an unknown content type',
      { model: 'sandbox-video', content: [{ type: 'gif', text: 'x' }] },
      'content[0].type: must be one of "text", "image_url", "video_url", "audio_url"',
    ],
    ['a seed past 2^32-1', { model: 'sandbox-video', content: prompt, seed: 4294967296 }, 'seed: must be an integer from -1 to 4294967295'],
    ['a long safety_identifier', { model: 'sandbox-video', content: prompt, safety_identifier: 'x'.repeat(65) }, 'safety_identifier: at most 64 characters'],
    [
      'a ratio outside the list',
      { model: 'sandbox-video', content: prompt, ratio: '2:1' },
      'ratio: must be one of "16:9", "4:3", "1:1", "3:4", "9:16", "21:9", "adaptive"',
    ],
    ['no model', { content: prompt }, 'model field is required'],
    [
      'a callback_url that is not http(s)',
      { model: 'sandbox-video', content: prompt, callback_url: 'ftp://example.com/x' },
      'callback_url: must be an http(s) URL',
    ],
  ] as const) {
    test(`${name} is 400 naming the field, with nothing held`, async () => {
      const { accountId, key } = await gw.account({ creditMicros: 5_000_000 });
      const res = await gw.call(key, 'POST', '/v1/videos/generations', body);
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, { error: message, type: 'invalid_request_error' });
      assert.equal((await gw.balance(accountId)).balance_micros, 5_000_000);
    });
  }

  test('an upstream that refuses the submission as the caller’s mistake is a 400 with its reason, and refunded', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 5_000_000 });
    // Selected by the body's model: only a create carries one (a poll of another test's task does not).
    await gw.sandboxControl('POST', '/__sandbox/faults', {
      kind: 'video',
      model: 'sandbox-video',
      status: 400,
      body: { error: { code: 'InvalidParameter', message: 'the prompt is too long for this model' } },
      times: 1,
    });
    const created = await gw.call(key, 'POST', '/v1/videos/generations', { model: 'sandbox-video', content: prompt });
    assert.deepEqual(created, {
      status: 400,
      body: { error: 'upstream refused the request: the prompt is too long for this model', type: 'invalid_request_error' },
    });
    assert.deepEqual(await gw.balance(accountId), { ...(await gw.balance(accountId)), balance_micros: 5_000_000, held_micros: 0 });
  });

  test('a failed task is refunded and its webhook carries error.code task_failed', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 5_000_000 });
    receiver.secret = (await gw.admin('GET', `/admin/accounts/${accountId}/webhook-secret`)).body.secret;
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'video', task_outcome: 'failed', times: 1 });
    const created = await gw.call(key, 'POST', '/v1/videos/generations', { model: 'sandbox-video', content: prompt, callback_url: receiver.url });
    const done = await finished(key, created.body.id);
    assert.equal(done.status, 'failed');
    assert.equal(done.error.code, 'OutputVideoSensitiveContentDetected');
    assert.deepEqual(await gw.balance(accountId), { ...(await gw.balance(accountId)), balance_micros: 5_000_000, held_micros: 0 });
    const delivery = await eventually(() => receiver.deliveries.find((d) => d.payload.task_id === created.body.id));
    assert.equal(delivery.verified, true);
    assert.deepEqual(Object.keys(delivery.payload).sort(), [
      'created_at',
      'error',
      'event_id',
      'finished_at',
      'livemode',
      'model',
      'status',
      'task_id',
      'task_type',
    ]);
    assert.deepEqual(
      { status: delivery.payload.status, code: delivery.payload.error.code, type: delivery.payload.task_type },
      { status: 'failed', code: 'task_failed', type: 'video' },
    );
    assert.equal(typeof delivery.payload.error.message, 'string');
  });

  test('a success webhook carries exactly the spec fields, livemode and its event id, signed', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 5_000_000 });
    receiver.secret = (await gw.admin('GET', `/admin/accounts/${accountId}/webhook-secret`)).body.secret;
    const created = await gw.call(key, 'POST', '/v1/videos/generations', { model: 'sandbox-video', content: prompt, callback_url: receiver.url });
    const done = await finished(key, created.body.id);
    const delivery = await eventually(() => receiver.deliveries.find((d) => d.payload.task_id === created.body.id));
    assert.equal(delivery.verified, true);
    assert.match(String(delivery.headers['x-service-signature']), /^sha256=[0-9a-f]{64}$/);
    assert.deepEqual(delivery.payload, {
      task_id: created.body.id,
      // the X-Service-Event-Id header's value, inside the signed body
      event_id: delivery.headers['x-service-event-id'],
      task_type: 'video',
      status: 'succeeded',
      model: 'sandbox-video',
      video_url: done.result.video_url,
      created_at: done.created_at,
      finished_at: done.finished_at,
      livemode: true,
    });
  });

  test('a task created on the ARK path calls back with the upstream id its caller knows', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 5_000_000 });
    receiver.secret = (await gw.admin('GET', `/admin/accounts/${accountId}/webhook-secret`)).body.secret;
    const created = await gw.call(key, 'POST', '/api/v3/contents/generations/tasks', { model: 'sandbox-video', content: prompt, callback_url: receiver.url });
    const delivery = await eventually(() => receiver.deliveries.find((d) => d.payload.task_id === created.body.id));
    assert.equal(delivery.verified, true);
    assert.equal(delivery.payload.status, 'succeeded');
  });

  test('DELETE on the ARK path cancels a queued task and refunds it', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 5_000_000 });
    const created = await gw.call(key, 'POST', '/v1/contents/generations/tasks', { model: 'sandbox-video', content: prompt });
    const cancelled = await gw.call(key, 'DELETE', `/v1/contents/generations/tasks/${created.body.id}`);
    assert.deepEqual(cancelled, { status: 200, body: {} });
    const record = await gw.call(key, 'GET', `/v1/contents/generations/tasks/${created.body.id}`);
    assert.equal(record.body.status, 'cancelled');
    assert.deepEqual(await gw.balance(accountId), { ...(await gw.balance(accountId)), balance_micros: 5_000_000, held_micros: 0 });
  });

  test('DELETE of a finished task is refused and keeps the bill', async () => {
    const { key } = await gw.account({ creditMicros: 5_000_000 });
    const created = await gw.call(key, 'POST', '/v1/contents/generations/tasks', { model: 'sandbox-video', content: prompt });
    await finished(key, created.body.id);
    const refused = await gw.call(key, 'DELETE', `/v1/contents/generations/tasks/${created.body.id}`);
    assert.deepEqual(refused, { status: 400, body: { error: 'only a queued task can be cancelled; this one is succeeded', type: 'invalid_request_error' } });
  });
});

describe('cancelling a video whose upstream task already started', () => {
  let gw: TestGateway;
  before(async () => {
    // We look at the upstream rarely, so our copy of the state still says queued.
    gw = await startTestGateway({ tasks: { poll_interval_ms: { image: 50, video: 60_000, erase: 50, minutes: 50 }, tick_ms: 25 } }, { sandboxTaskMs: 300 });
  });
  after(() => gw.close());

  test('is refused after asking the upstream, and the hold stays for the video being made', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 5_000_000 });
    const startedAt = Date.now();
    const created = await gw.call(key, 'POST', '/v1/contents/generations/tasks', { model: 'sandbox-video', content: [{ type: 'text', text: 'started' }] });
    // The sandbox keeps a task queued for a third of its 300 ms, then runs it.
    await eventually(
      async () => (await gw.call(key, 'GET', `/api/v3/contents/generations/tasks/${created.body.id}`)).body.status === 'queued' && Date.now() - startedAt > 150,
    );
    const refused = await gw.call(key, 'DELETE', `/v1/contents/generations/tasks/${created.body.id}`);
    assert.deepEqual(refused, { status: 400, body: { error: 'only a queued task can be cancelled; this one has started', type: 'invalid_request_error' } });
    assert.equal((await gw.balance(accountId)).held_micros, 5 * PRICE_PER_SECOND);
  });
});
