// Async image generation end to end: task states, gallery, refunds, callbacks.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { eventually, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { type Receiver, startReceiver } from '../helpers/receiver.js';

const PRICE_PER_IMAGE = 40_000;

describe('async images', () => {
  let gw: TestGateway;
  let receiver: Receiver;
  before(async () => {
    gw = await startTestGateway();
    receiver = await startReceiver();
  });
  after(async () => {
    await gw.close();
    await receiver.close();
  });
  beforeEach(() => gw.sandboxControl('DELETE', '/__sandbox/faults'));

  const finished = (key: string, id: string) =>
    eventually(async () => {
      const { body } = await gw.call(key, 'GET', `/v1/images/async/${id}`);
      return (body.status === 'succeeded' || body.status === 'failed') && body;
    });

  test('a task is queued at once, then succeeds with the images; each image is billed', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    const created = await gw.call(key, 'POST', '/v1/images/async', { model: 'sandbox-image', prompt: 'a toll gate at dawn', n: 2 });
    assert.equal(created.status, 200);
    assert.deepEqual(Object.keys(created.body).sort(), ['created_at', 'id', 'model', 'status']);
    assert.deepEqual({ status: created.body.status, model: created.body.model }, { status: 'queued', model: 'sandbox-image' });
    assert.equal(typeof created.body.created_at, 'number');
    assert.equal((await gw.balance(accountId)).held_micros, 2 * PRICE_PER_IMAGE, 'funds frozen at submission');

    const done = await finished(key, created.body.id);
    assert.equal(done.status, 'succeeded');
    assert.equal(done.result.data.length, 2);
    assert.ok(done.result.data.every((image: any) => image.url.startsWith('http')));
    assert.equal(typeof done.result.created, 'number');
    assert.ok(!('error' in done));
    assert.deepEqual(await gw.balance(accountId), { ...(await gw.balance(accountId)), balance_micros: 1_000_000 - 2 * PRICE_PER_IMAGE, held_micros: 0 });

    const gallery = await gw.call(key, 'GET', '/v1/assets?kind=image');
    assert.deepEqual(gallery.body.data.map((a: any) => a.url).sort(), done.result.data.map((i: any) => i.url).sort());
  });

  test('a failed task says why and refunds the frozen amount', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'images', task_outcome: 'failed', times: 1 });
    const created = await gw.call(key, 'POST', '/v1/images/async', { model: 'sandbox-image', prompt: 'forbidden' });
    const done = await finished(key, created.body.id);
    assert.equal(done.status, 'failed');
    assert.equal(typeof done.error, 'string');
    assert.match(done.error, /safety system/);
    assert.ok(!('result' in done));
    assert.deepEqual(await gw.balance(accountId), { ...(await gw.balance(accountId)), balance_micros: 1_000_000, held_micros: 0 });
  });

  test("an unknown task and another account's task are both 404", async () => {
    const owner = await gw.account();
    const other = await gw.account();
    const created = await gw.call(owner.key, 'POST', '/v1/images/async', { model: 'sandbox-image', prompt: 'mine' });
    assert.equal((await gw.call(other.key, 'GET', `/v1/images/async/${created.body.id}`)).status, 404);
    assert.deepEqual(await gw.call(owner.key, 'GET', '/v1/images/async/img_nope'), {
      status: 404,
      body: { error: 'task img_nope not found', type: 'not_found_error' },
    });
  });

  test('a callback_url gets a signed image webhook with the result_url', async () => {
    const { accountId, key } = await gw.account();
    receiver.secret = (await gw.admin('GET', `/admin/accounts/${accountId}/webhook-secret`)).body.secret;
    const created = await gw.call(key, 'POST', '/v1/images/async', { model: 'sandbox-image', prompt: 'call me', callback_url: receiver.url });
    const delivery = await eventually(() => receiver.deliveries.find((d) => d.payload.task_id === created.body.id));
    assert.equal(delivery.verified, true);
    assert.deepEqual(Object.keys(delivery.payload).sort(), [
      'created_at',
      'event_id',
      'finished_at',
      'livemode',
      'model',
      'result_url',
      'status',
      'task_id',
      'task_type',
    ]);
    assert.deepEqual(
      { status: delivery.payload.status, task_type: delivery.payload.task_type, result_url: delivery.payload.result_url },
      { status: 'succeeded', task_type: 'image', result_url: `${gw.url}/v1/images/async/${created.body.id}` },
    );
  });

  test('a missing prompt is 400 and nothing is held', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    assert.deepEqual(await gw.call(key, 'POST', '/v1/images/async', { model: 'sandbox-image' }), {
      status: 400,
      body: { error: 'prompt field is required', type: 'invalid_request_error' },
    });
    assert.equal((await gw.balance(accountId)).balance_micros, 1_000_000);
  });

  test('a per-token model reports usage in the result and is billed on its tokens', async () => {
    const tokens = await startTestGateway({
      models: {
        'image-tokens': {
          type: 'image',
          channel: 'sandbox-openai',
          upstream_model: 'sandbox-image-token',
          price: { input_token: 5_000_000, output_token: 10_000_000 },
        },
      },
    });
    try {
      const { accountId, key } = await tokens.account({ creditMicros: 10_000_000 });
      const created = await tokens.call(key, 'POST', '/v1/images/async', { model: 'image-tokens', prompt: 'three word prompt' });
      const done = await eventually(async () => {
        const { body } = await tokens.call(key, 'GET', `/v1/images/async/${created.body.id}`);
        return body.status === 'succeeded' && body;
      });
      const { input_tokens, output_tokens } = done.result.usage;
      assert.ok(input_tokens > 0 && output_tokens > 0);
      assert.equal((await tokens.settled(accountId)).balance_micros, 10_000_000 - (input_tokens * 5 + output_tokens * 10));
    } finally {
      await tokens.close();
    }
  });
});
