// The task engine on its own: leases, renewal during long polls, and failure past the timeout.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { checkAccountBalance, createAccount, holdFundsIn } from '../../src/billing/ledger.js';
import { createCatalogue } from '../../src/pipeline/catalogue.js';
import { openStore, type Store } from '../../src/store/open.js';
import { findTask, insertTask } from '../../src/store/tasks.js';
import { createTaskEngine } from '../../src/tasks/engine.js';
import type { TaskKindHandler } from '../../src/tasks/types.js';
import { buildConfig } from '../../src/config/load.js';
import { sandboxCatalogue } from '../../src/config/sandbox-catalogue.js';
import { createUpstreams } from '../../src/upstreams/pool.js';

const quiet = { info() {}, warn() {}, error() {} };
const { config } = buildConfig({ ...sandboxCatalogue('http://127.0.0.1:9') });
const upstreams = createUpstreams(config.channels);
const catalogue = createCatalogue(config.models, upstreams);
let store: Store;
before(async () => {
  store = await openStore('sqlite::memory:');
});
after(async () => {
  await store.close();
  await upstreams.close();
});

async function queuedImageTask(id: string, createdAt = Date.now()) {
  const account = await createAccount(store, { name: id, creditMicros: 1_000_000 });
  await store.db.transaction().execute(async (trx) => {
    const hold = await holdFundsIn(trx, { accountId: account.id, amountMicros: 40_000, requestId: id, model: 'sandbox-image', endpoint: 'tasks.image', taskId: id });
    await insertTask(trx, {
      id, account_id: account.id, key_id: null, request_id: id, kind: 'image', model: 'sandbox-image', status: 'queued', upstream_id: null,
      hold_id: hold.holdId, request: '{"model":"sandbox-image","prompt":"x"}', result: null, error: null, upstream_record: null, callback_url: null,
      attempts: 0, next_poll_at: 0, lease_until: null, lease_owner: null, created_at: createdAt, updated_at: createdAt, finished_at: null,
    });
  });
  return account.id;
}

const engineWith = (image: TaskKindHandler, options: { leaseMs?: number; taskTimeoutMs?: number } = {}) =>
  createTaskEngine({
    store, catalogue, log: quiet, tickMs: 10, leaseMs: options.leaseMs ?? 150, taskTimeoutMs: options.taskTimeoutMs ?? 60_000,
    pollIntervalMs: { image: 10, video: 10, erase: 10, minutes: 10 },
    handlers: { image, video: image, erase: image, minutes: image },
  });

test('a long poll keeps its lease, so a second engine does not start the same task', async () => {
  await queuedImageTask('img_long');
  let finishPoll!: () => void;
  let polls = 0;
  const slow: TaskKindHandler = {
    kind: 'image', webhookType: 'image', submit: async () => ({ upstreamId: null }),
    poll: async () => {
      polls += 1;
      await new Promise<void>((resolve) => (finishPoll = resolve));
      return { state: 'succeeded', result: {}, units: { image: 1 } };
    },
  };
  const first = engineWith(slow);
  const working = first.runOnce();
  await new Promise((resolve) => setTimeout(resolve, 500)); // more than three leases long
  assert.equal(await engineWith(slow).runOnce(), 0, 'nothing to claim: the lease was renewed');
  finishPoll();
  await working;
  assert.equal(polls, 1);
  assert.equal((await findTask(store.db, 'img_long'))!.status, 'succeeded');
});

test('a task whose finish keeps failing is failed and its hold released once past the timeout', async () => {
  const accountId = await queuedImageTask('img_broken', Date.now() - 10_000);
  const broken: TaskKindHandler = {
    kind: 'image', webhookType: 'image', submit: async () => ({ upstreamId: null }),
    // A result that cannot be stored: JSON.stringify throws on a BigInt.
    poll: async () => ({ state: 'succeeded', result: { size: 1n }, units: { image: 1 } }),
  };
  await engineWith(broken, { taskTimeoutMs: 5_000 }).runOnce();
  const task = (await findTask(store.db, 'img_broken'))!;
  assert.equal(task.status, 'failed');
  assert.equal(JSON.parse(task.error!).code, 'finish_failed');
  assert.deepEqual(await checkAccountBalance(store, accountId), { balanceMicros: 1_000_000, heldMicros: 0, ledgerBalanceMicros: 1_000_000, ledgerHeldMicros: 0, consistent: true });
});
