// The account's webhook actions through a live gateway: redelivering a dropped delivery (same event
// id, signed with the current secret, a fresh set of attempts) and sending a signed test event to a
// URL, with the receiver's answer, a refused address or an unreachable one reported, bad input a 400.
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { verifyWebhook } from '../../src/index.js';
import { eventually, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { type Receiver, startReceiver } from '../helpers/receiver.js';

const badRequest = (error: string) => ({ status: 400, body: { error, type: 'invalid_request_error' } });

describe('account webhook actions', () => {
  let gw: TestGateway;
  let receiver: Receiver;
  before(async () => {
    gw = await startTestGateway({ webhooks: { retry_delays_ms: [50, 50, 50], timeout_ms: 2_000 } });
    receiver = await startReceiver();
  });
  after(async () => {
    await gw.close();
    await receiver.close();
  });

  const imageTask = async (key: string) => {
    const created = await gw.call(key, 'POST', '/v1/images/async', { model: 'sandbox-image', prompt: 'a cat', callback_url: receiver.url });
    assert.equal(created.status, 200);
    return created.body.id as string;
  };
  const deliveryOf = (key: string, taskId: string, state: string) =>
    eventually(async () => {
      const { body } = await gw.call(key, 'GET', `/v1/account/webhook-deliveries?task_id=${taskId}`);
      return body.data[0]?.state === state && body.data[0];
    }, 10_000);
  const receivedFor = (taskId: string) => receiver.deliveries.filter((d) => d.payload.task_id === taskId);

  test('a dropped delivery is redelivered once, with its event id, signed with the secret rotated since, and then shows delivered', async () => {
    const { key } = await gw.account();
    receiver.answers.push(500, 500, 500, 500);
    const taskId = await imageTask(key);
    const dropped = await deliveryOf(key, taskId, 'dropped');
    assert.equal(dropped.attempts, 4);
    const old = (await gw.call(key, 'GET', '/v1/account/webhook-secret')).body.secret;
    const rotated = (await gw.call(key, 'POST', '/v1/account/webhook-secret')).body.secret;

    const redelivered = await gw.call(key, 'POST', `/v1/account/webhook-deliveries/${dropped.id}/redeliver`);
    assert.equal(redelivered.status, 200);
    assert.deepEqual(redelivered.body, {
      ...dropped,
      state: 'pending',
      attempts: 0,
      last_status: null,
      last_error: null,
      next_attempt_at: redelivered.body.next_attempt_at,
    });
    // a second request while it is pending re-arms nothing (409 pending, or 409 delivered if it already went)
    assert.equal((await gw.call(key, 'POST', `/v1/account/webhook-deliveries/${dropped.id}/redeliver`)).status, 409);

    const delivered = await deliveryOf(key, taskId, 'delivered');
    assert.deepEqual([delivered.id, delivered.event_id, delivered.attempts, delivered.last_status], [dropped.id, dropped.event_id, 1, 200]);
    await new Promise((resolve) => setTimeout(resolve, 300)); // room for a twin to arrive, were there one
    const received = receivedFor(taskId);
    assert.equal(received.length, 5, 'four refused attempts, then exactly one redelivery');
    const last = received[4]!;
    assert.equal(last.headers['x-service-event-id'], dropped.event_id);
    assert.equal(received[0]!.headers['x-service-event-id'], dropped.event_id);
    assert.deepEqual([verifyWebhook(rotated, last.headers, last.rawBody), verifyWebhook(old, last.headers, last.rawBody)], [true, false]);
    assert.equal(last.rawBody, received[0]!.rawBody, 'the same payload as the first attempt');
  });

  test('redelivering a delivered delivery is a 409 naming why; nothing is sent again', async () => {
    const { key } = await gw.account();
    const taskId = await imageTask(key);
    const delivered = await deliveryOf(key, taskId, 'delivered');
    assert.deepEqual(await gw.call(key, 'POST', `/v1/account/webhook-deliveries/${delivered.id}/redeliver`), {
      status: 409,
      body: { error: `webhook delivery ${delivered.id} was delivered; only a dropped delivery can be redelivered`, type: 'invalid_request_error' },
    });
    assert.equal(receivedFor(taskId).length, 1);
  });

  test("another account's delivery, or an unknown id, is a 404, and is not redelivered", async () => {
    const { key } = await gw.account();
    const other = await gw.account();
    receiver.answers.push(500, 500, 500, 500);
    const taskId = await imageTask(other.key);
    const dropped = await deliveryOf(other.key, taskId, 'dropped');
    const notFound = (id: string) => ({ status: 404, body: { error: `webhook delivery ${id} not found`, type: 'not_found_error' } });
    assert.deepEqual(await gw.call(key, 'POST', `/v1/account/webhook-deliveries/${dropped.id}/redeliver`), notFound(dropped.id));
    assert.deepEqual(await gw.call(key, 'POST', '/v1/account/webhook-deliveries/whk_none/redeliver'), notFound('whk_none'));
    assert.equal((await deliveryOf(other.key, taskId, 'dropped')).attempts, 4);
  });

  test('a test event reaches the receiver signed with the current secret, and its status and body excerpt are answered', async () => {
    const { accountId, key } = await gw.account();
    const secret = (await gw.call(key, 'POST', '/v1/account/webhook-secret')).body.secret;
    receiver.answers.push(202);
    receiver.answerBody = `thanks ${'x'.repeat(400)}`;
    const sent = receiver.deliveries.length;
    try {
      const { status, body } = await gw.call(key, 'POST', '/v1/account/webhook-secret/test', { url: receiver.url });
      assert.equal(status, 200);
      assert.match(body.event_id, /^evt_/);
      assert.ok(Number.isInteger(body.response_ms) && body.response_ms >= 0);
      assert.deepEqual(body, {
        event_id: body.event_id,
        status_code: 202,
        response_ms: body.response_ms,
        body_excerpt: receiver.answerBody.slice(0, 300),
        signature_header_sent: true,
      });
      assert.equal(receiver.deliveries.length, sent + 1);
      const got = receiver.deliveries[sent]!;
      assert.ok(verifyWebhook(secret, got.headers, got.rawBody), 'the signature verifies with the current secret');
      assert.equal(got.headers['x-service-event-id'], body.event_id);
      assert.deepEqual(got.payload, { type: 'webhook.test', event_id: body.event_id, account_id: accountId, created_at: got.payload.created_at });
    } finally {
      receiver.answerBody = '';
    }
  });

  test('a test event to a port nobody listens on answers 200 with the error', async () => {
    const { key } = await gw.account();
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as { port: number };
    await new Promise((resolve) => closed.close(resolve));
    const { status, body } = await gw.call(key, 'POST', '/v1/account/webhook-secret/test', { url: `http://127.0.0.1:${port}/hook` });
    assert.equal(status, 200);
    assert.deepEqual(Object.keys(body).sort(), ['error', 'event_id']);
    assert.match(body.error, /ECONNREFUSED|connect/i);
  });

  const badUrls: [string, unknown, string][] = [
    ['not a URL', { url: 'not a url' }, 'url: must not contain spaces or control characters'],
    ['another scheme', { url: 'ftp://example.com/hook' }, 'url: must be an http(s) URL'],
    ['credentials in the URL', { url: 'https://user:pw@example.com/hook' }, 'url: must not contain credentials'],
  ];
  for (const [what, body, error] of badUrls) {
    test(`a test event with ${what} is a 400 naming url`, async () => {
      const { key } = await gw.account();
      assert.deepEqual(await gw.call(key, 'POST', '/v1/account/webhook-secret/test', body), badRequest(error));
    });
  }

  test('a test event without a url is a 400 naming url', async () => {
    const { key } = await gw.account();
    const { status, body } = await gw.call(key, 'POST', '/v1/account/webhook-secret/test', {});
    assert.equal(status, 400);
    assert.match(body.error, /url/);
  });

  test('test events count against the key’s requests per minute', async () => {
    const { key } = await gw.account({ rpm: 1 });
    assert.equal((await gw.call(key, 'POST', '/v1/account/webhook-secret/test', { url: receiver.url })).status, 200);
    assert.equal((await gw.call(key, 'POST', '/v1/account/webhook-secret/test', { url: receiver.url })).status, 429);
  });
});

describe('account test event without the private-address exemption', () => {
  let gw: TestGateway;
  let receiver: Receiver;
  before(async () => {
    gw = await startTestGateway({ network: { allow_private_urls: false } });
    receiver = await startReceiver();
  });
  after(async () => {
    await gw.close();
    await receiver.close();
  });

  test('a loopback receiver is refused as deliveries refuse it, reported as an error, and nothing reaches it', async () => {
    const { key } = await gw.account();
    const { status, body } = await gw.call(key, 'POST', '/v1/account/webhook-secret/test', { url: receiver.url });
    assert.equal(status, 200);
    assert.deepEqual(body, { event_id: body.event_id, error: 'RefusedUrlError: url: refused address 127.0.0.1 (loopback)' });
    assert.equal(receiver.deliveries.length, 0);
  });
});
