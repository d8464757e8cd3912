// Work the upstream may have done is never repeated blindly: image generations are bounded
// (malformed answers and crashes included), a video submission runs to its end when its caller
// leaves, and malformed poll answers are asked again, never billed.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { request } from 'undici';
import { holdFundsIn } from '../../src/billing/ledger.js';
import { insertTask } from '../../src/store/tasks.js';
import { ARK_TASKS_PATH } from '../../src/upstreams/ark/client.js';
import { eventually, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { type Receiver, startReceiver } from '../helpers/receiver.js';

const PRICE_PER_IMAGE = 40_000;
const PRICE_PER_SECOND = 100_000;
const CREDIT = 5_000_000;
const MAX_GENERATION_ATTEMPTS = 3; // the default

/** What the sandbox received of one upstream kind, oldest first. */
async function upstreamRequests(gw: TestGateway, kind: string): Promise<{ method: string; path: string; body: any; aborted: boolean }[]> {
  return (await gw.sandboxControl('GET', '/__sandbox/requests')).data.filter((entry: { kind: string }) => entry.kind === kind);
}

/** The kinds of the account's ledger rows, oldest first, credit excluded. */
async function ledgerKinds(gw: TestGateway, accountId: string): Promise<string[]> {
  const rows = (await gw.admin('GET', `/admin/accounts/${accountId}/ledger?limit=100`)).body.data as { kind: string }[];
  return rows
    .map((row) => row.kind)
    .filter((kind) => kind !== 'credit')
    .reverse();
}

describe('task attempts', () => {
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
  beforeEach(async () => {
    await gw.sandboxControl('DELETE', '/__sandbox/faults');
    await gw.sandboxControl('DELETE', '/__sandbox/requests');
  });

  const finishedImage = (key: string, id: string) =>
    eventually(async () => {
      const { body } = await gw.call(key, 'GET', `/v1/images/async/${id}`);
      return (body.status === 'succeeded' || body.status === 'failed') && body;
    });
  const finishedVideo = (key: string, id: string, timeoutMs?: number) =>
    eventually(async () => {
      const { body } = await gw.call(key, 'GET', `/v1/videos/generations/${id}`);
      return ['succeeded', 'failed', 'cancelled'].includes(body.status) && body;
    }, timeoutMs);

  const malformed = { 'a body that is not JSON': '<html>502 Bad Gateway</html>', 'JSON without a data array': { created: 1_700_000_000 } };
  for (const [name, body] of Object.entries(malformed)) {
    test(`a 200 with ${name} from the images upstream is generated ${MAX_GENERATION_ATTEMPTS} times, then failed, refunded exactly and called back`, async () => {
      const { accountId, key } = await gw.account({ creditMicros: CREDIT });
      receiver.secret = (await gw.admin('GET', `/admin/accounts/${accountId}/webhook-secret`)).body.secret;
      await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'images', status: 200, body });
      const created = await gw.call(key, 'POST', '/v1/images/async', { model: 'sandbox-image', prompt: name, callback_url: receiver.url });

      const done = await finishedImage(key, created.body.id);
      assert.deepEqual(
        { status: done.status, error: done.error },
        { status: 'failed', error: `the upstream did not complete the work in ${MAX_GENERATION_ATTEMPTS} attempts` },
      );
      assert.equal((await upstreamRequests(gw, 'images')).length, MAX_GENERATION_ATTEMPTS);
      assert.deepEqual(await gw.balance(accountId), { ...(await gw.balance(accountId)), balance_micros: CREDIT, held_micros: 0 });
      assert.deepEqual(await ledgerKinds(gw, accountId), ['hold', 'release']);
      const delivery = await eventually(() => receiver.deliveries.find((d) => d.payload.task_id === created.body.id));
      assert.deepEqual({ status: delivery.payload.status, verified: delivery.verified }, { status: 'failed', verified: true });
    });
  }

  test('an images upstream answering 503 once is asked again after a backoff and the task is billed once', async () => {
    const { accountId, key } = await gw.account({ creditMicros: CREDIT });
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'images', status: 503, times: 1 });
    const created = await gw.call(key, 'POST', '/v1/images/async', { model: 'sandbox-image', prompt: 'second time lucky' });

    assert.equal((await finishedImage(key, created.body.id)).status, 'succeeded');
    assert.equal((await upstreamRequests(gw, 'images')).length, 2);
    assert.deepEqual(await gw.balance(accountId), { ...(await gw.balance(accountId)), balance_micros: CREDIT - PRICE_PER_IMAGE, held_micros: 0 });
    assert.deepEqual(await ledgerKinds(gw, accountId), ['hold', 'settle']);
  });

  test('an images upstream refusing the request with 400 is asked once and the task is refunded', async () => {
    const { accountId, key } = await gw.account({ creditMicros: CREDIT });
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'images', task_outcome: 'failed' });
    const created = await gw.call(key, 'POST', '/v1/images/async', { model: 'sandbox-image', prompt: 'refused' });

    assert.equal((await finishedImage(key, created.body.id)).status, 'failed');
    assert.equal((await upstreamRequests(gw, 'images')).length, 1);
    assert.deepEqual(await gw.balance(accountId), { ...(await gw.balance(accountId)), balance_micros: CREDIT, held_micros: 0 });
  });

  /** An image task as an instance that died mid-generation leaves it: processing, its lease long expired. */
  async function leftByDeadInstance(accountId: string, generationAttempts: number): Promise<string> {
    const id = `img_dead_${generationAttempts}_${Date.now()}`;
    const at = Date.now();
    await gw.gateway.store.db.transaction().execute(async (trx) => {
      const hold = await holdFundsIn(trx, {
        accountId,
        amountMicros: PRICE_PER_IMAGE,
        requestId: id,
        model: 'sandbox-image',
        endpoint: 'tasks.image',
        taskId: id,
      });
      await insertTask(trx, {
        id,
        account_id: accountId,
        key_id: null,
        request_id: id,
        kind: 'image',
        model: 'sandbox-image',
        status: 'processing',
        upstream_id: null,
        hold_id: hold.holdId,
        request: JSON.stringify({ model: 'sandbox-image', prompt: id }),
        result: null,
        error: null,
        upstream_record: null,
        callback_url: null,
        attempts: 0,
        next_poll_at: at,
        lease_until: at - 1,
        lease_owner: 'engine_dead',
        created_at: at,
        updated_at: at,
        finished_at: null,
        generation_attempts: generationAttempts,
      });
    });
    return id;
  }

  test('a task whose last allowed generation was cut off by a dead instance is failed and refunded without generating again', async () => {
    const { accountId, key } = await gw.account({ creditMicros: CREDIT });
    const id = await leftByDeadInstance(accountId, MAX_GENERATION_ATTEMPTS);

    const done = await finishedImage(key, id);
    assert.deepEqual(
      { status: done.status, error: done.error },
      { status: 'failed', error: `the upstream did not complete the work in ${MAX_GENERATION_ATTEMPTS} attempts` },
    );
    assert.equal((await upstreamRequests(gw, 'images')).length, 0);
    assert.deepEqual(await gw.balance(accountId), { ...(await gw.balance(accountId)), balance_micros: CREDIT, held_micros: 0 });
    assert.deepEqual(await ledgerKinds(gw, accountId), ['hold', 'release']);
  });

  test('a task whose generation was cut off by a dead instance generates only in the attempts left', async () => {
    const { accountId, key } = await gw.account({ creditMicros: CREDIT });
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'images', status: 200, body: 'truncated' });
    const id = await leftByDeadInstance(accountId, MAX_GENERATION_ATTEMPTS - 1);

    assert.equal((await finishedImage(key, id)).status, 'failed');
    assert.equal((await upstreamRequests(gw, 'images')).length, 1);
    assert.deepEqual(await gw.balance(accountId), { ...(await gw.balance(accountId)), balance_micros: CREDIT, held_micros: 0 });
    assert.deepEqual(await ledgerKinds(gw, accountId), ['hold', 'release']);
  });

  test('a caller that leaves during a video submission still gets a task that succeeds, billed exactly, with one upstream create', async () => {
    const { accountId, key } = await gw.account({ creditMicros: CREDIT });
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'video', path: ARK_TASKS_PATH, model: 'sandbox-video', delay_ms: 800, times: 1 });
    const controller = new AbortController();
    const leaving = request(`${gw.url}/v1/videos/generations`, {
      method: 'POST',
      signal: controller.signal,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sandbox-video', content: [{ type: 'text', text: 'left before the answer' }], duration: 5 }),
    }).then(
      () => 'answered',
      (error: Error) => error.name,
    );
    await eventually(async () => (await upstreamRequests(gw, 'video')).length === 1);
    controller.abort();
    assert.equal(await leaving, 'AbortError');

    const task = await eventually(() => gw.gateway.store.db.selectFrom('tasks').select(['id']).where('account_id', '=', accountId).executeTakeFirst());
    const done = await finishedVideo(key, task.id);
    assert.equal(done.status, 'succeeded');
    const creates = (await upstreamRequests(gw, 'video')).filter((entry) => entry.method === 'POST');
    assert.deepEqual(
      creates.map((entry) => ({ path: entry.path, aborted: entry.aborted })),
      [{ path: ARK_TASKS_PATH, aborted: false }],
    );
    assert.deepEqual(await gw.balance(accountId), { ...(await gw.balance(accountId)), balance_micros: CREDIT - 5 * PRICE_PER_SECOND, held_micros: 0 });
    assert.deepEqual(await ledgerKinds(gw, accountId), ['hold', 'settle']);
  });

  test('a video status poll answered with a body that is not JSON is asked again and the task is billed exactly', async () => {
    const { accountId, key } = await gw.account({ creditMicros: CREDIT });
    const created = await gw.call(key, 'POST', '/v1/videos/generations', {
      model: 'sandbox-video',
      content: [{ type: 'text', text: 'garbled poll' }],
      duration: 5,
    });
    // Only polls follow the create: these two answers are poll answers.
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'video', status: 200, body: 'not json', times: 2 });

    assert.equal((await finishedVideo(key, created.body.id)).status, 'succeeded');
    assert.deepEqual(await gw.balance(accountId), { ...(await gw.balance(accountId)), balance_micros: CREDIT - 5 * PRICE_PER_SECOND, held_micros: 0 });
    assert.deepEqual(await ledgerKinds(gw, accountId), ['hold', 'settle']);
  });

  test('a video status poll answered with a record without a status does not fail the task', async () => {
    const { key } = await gw.account({ creditMicros: CREDIT });
    const created = await gw.call(key, 'POST', '/v1/videos/generations', {
      model: 'sandbox-video',
      content: [{ type: 'text', text: 'empty record' }],
      duration: 5,
    });
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'video', status: 200, body: {}, times: 2 });

    assert.equal((await finishedVideo(key, created.body.id)).status, 'succeeded');
  });
});

describe('task attempts against the task timeout', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway({
      tasks: { poll_interval_ms: { image: 50, video: 50, erase: 50, minutes: 50 }, tick_ms: 25, lease_ms: 5_000, submit_lease_ms: 5_000, timeout_ms: 1_000 },
    });
  });
  after(() => gw.close());

  test('a video whose status polls keep answering garbage is failed at the task timeout and refunded exactly', async () => {
    const { accountId, key } = await gw.account({ creditMicros: CREDIT });
    const created = await gw.call(key, 'POST', '/v1/videos/generations', {
      model: 'sandbox-video',
      content: [{ type: 'text', text: 'never readable' }],
      duration: 5,
    });
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'video', status: 200, body: '<html>oops</html>' });

    const done = await eventually(async () => {
      const { body } = await gw.call(key, 'GET', `/v1/videos/generations/${created.body.id}`);
      return body.status === 'failed' && body;
    });
    assert.deepEqual(done.error, { code: 'upstream_timeout', message: 'the upstream did not finish the task in time' });
    assert.deepEqual(await gw.balance(accountId), { ...(await gw.balance(accountId)), balance_micros: CREDIT, held_micros: 0 });
  });
});
