// The callbacks under the OpenAPI document's `webhooks`: their payload schemas validate what a
// live gateway really delivers to a receiver (a task that succeeded, one that failed, a test
// event), and their parameters name the signature headers each delivery carries.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { eventually, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { fetchDocument, schemaValidator } from '../helpers/openapi.js';
import { type Delivery, type Receiver, startReceiver } from '../helpers/receiver.js';

describe('OpenAPI webhooks', () => {
  let gw: TestGateway;
  let receiver: Receiver;
  let doc: any;
  let check: ReturnType<typeof schemaValidator>;
  before(async () => {
    gw = await startTestGateway({ webhooks: { retry_delays_ms: [50], timeout_ms: 2_000 } });
    receiver = await startReceiver();
    doc = await fetchDocument(gw.url);
    check = schemaValidator(doc);
  });
  after(async () => {
    await gw.close();
    await receiver.close();
  });

  const callback = (name: string) => doc.webhooks?.[name]?.post;
  const payloadSchema = (name: string) => callback(name).requestBody.content['application/json'].schema;
  /** The headers a callback's parameters name, lower-cased as Node receives them. */
  const documentedHeaders = (name: string) =>
    callback(name)
      .parameters.filter((p: any) => p.in === 'header' && p.required)
      .map((p: any) => p.name.toLowerCase())
      .sort();
  /** The payload's fields that its schema does not name (an open schema would let them pass). */
  const undocumented = (name: string, payload: object) => Object.keys(payload).filter((field) => !(field in payloadSchema(name).properties));
  const deliveryFor = (taskId: string) => eventually(() => receiver.deliveries.find((d) => d.payload.task_id === taskId), 10_000);

  const imageTaskDelivery = async (key: string): Promise<Delivery> => {
    const created = await gw.call(key, 'POST', '/v1/images/async', { model: 'sandbox-image', prompt: 'a toll gate', callback_url: receiver.url });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    return deliveryFor(created.body.id);
  };

  test('a succeeded task’s delivered callback is valid against the taskFinished schema, with the documented headers', async () => {
    const { key } = await gw.account();
    const delivery = await imageTaskDelivery(key);
    assert.equal(delivery.payload.status, 'succeeded');
    assert.equal(check(payloadSchema('taskFinished'), delivery.payload), undefined, delivery.rawBody);
    assert.deepEqual(undocumented('taskFinished', delivery.payload), []);
    const documented = documentedHeaders('taskFinished');
    assert.deepEqual(documented, ['x-service-event-id', 'x-service-signature', 'x-service-timestamp']);
    for (const name of documented) assert.ok(delivery.headers[name], `${name} was sent`);
    const signature = callback('taskFinished').parameters.find((p: any) => p.name.toLowerCase() === 'x-service-signature');
    assert.match(String(delivery.headers['x-service-signature']), new RegExp(signature.schema.pattern));
  });

  test('a failed task’s delivered callback, with its error, is valid against the taskFinished schema', async () => {
    const { key } = await gw.account();
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'images', task_outcome: 'failed', times: 1 });
    const delivery = await imageTaskDelivery(key);
    assert.equal(delivery.payload.status, 'failed');
    assert.ok(delivery.payload.error, delivery.rawBody);
    assert.equal(check(payloadSchema('taskFinished'), delivery.payload), undefined, delivery.rawBody);
    assert.deepEqual(undocumented('taskFinished', delivery.payload), []);
  });

  test('a test event sent to a receiver is valid against the webhookTest schema, with the documented headers', async () => {
    const { key } = await gw.account();
    const sent = await gw.call(key, 'POST', '/v1/account/webhook-secret/test', { url: receiver.url });
    assert.equal(sent.status, 200, JSON.stringify(sent.body));
    const delivery = await eventually(() => receiver.deliveries.find((d) => d.payload.event_id === sent.body.event_id));
    assert.equal(check(payloadSchema('webhookTest'), delivery.payload), undefined, delivery.rawBody);
    for (const name of documentedHeaders('webhookTest')) assert.ok(delivery.headers[name], `${name} was sent`);
  });

  test('a finished batch’s delivered callback is valid against the batchEnded schema', async () => {
    const { key } = await gw.account();
    const form = new FormData();
    form.append('purpose', 'batch');
    const line = {
      custom_id: 'one',
      method: 'POST',
      url: '/v1/chat/completions',
      body: { model: 'sandbox-chat', messages: [{ role: 'user', content: 'hi' }] },
    };
    form.append('file', new Blob([`${JSON.stringify(line)}\n`]), 'in.jsonl');
    const uploaded = await fetch(`${gw.url}/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
    const { id: inputFileId } = (await uploaded.json()) as { id: string };
    const batch = { input_file_id: inputFileId, endpoint: '/v1/chat/completions', completion_window: '24h', callback_url: receiver.url };
    const created = await gw.call(key, 'POST', '/v1/batches', batch);
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const delivery = await eventually(() => receiver.deliveries.find((d) => d.payload.data?.id === created.body.id), 10_000);
    assert.equal(delivery.payload.type, 'batch.completed');
    assert.equal(check(payloadSchema('batchEnded'), delivery.payload), undefined, delivery.rawBody);
    assert.deepEqual(undocumented('batchEnded', delivery.payload), []);
    assert.deepEqual(
      Object.keys(delivery.payload.data).filter((field) => !(field in payloadSchema('batchEnded').properties.data.properties)),
      [],
    );
  });
});
