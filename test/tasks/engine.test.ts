// The task engine on its own: leases, renewal during long polls, failure past the timeout, and
// tasks their submitter or generator left behind.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { checkAccountBalance, createAccount } from '../../src/billing/accounts.js';
import { holdFundsIn } from '../../src/billing/ledger.js';
import { priceListId } from '../../src/billing/price-lists.js';
import { buildConfig } from '../../src/config/load.js';
import { sandboxCatalogue } from '../../src/config/sandbox-catalogue.js';
import { createCatalogue } from '../../src/pipeline/catalogue.js';
import { openStore, type Store } from '../../src/store/open.js';
import { findTask, insertTask } from '../../src/store/tasks.js';
import { listUsage } from '../../src/store/usage.js';
import { createTaskEngine } from '../../src/tasks/engine.js';
import type { TaskKindHandler } from '../../src/tasks/types.js';
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

/**
 * An image task holding 40 000 micros; `left` makes it one a dead instance left behind (its lease
 * long expired), `prices` one submitted at those prices (tasks.prices).
 */
async function queuedImageTask(
  id: string,
  createdAt = Date.now(),
  left: { status?: 'submitting' | 'processing'; generationAttempts?: number } = {},
  prices?: object,
) {
  const account = await createAccount(store, { name: id, creditMicros: 1_000_000 });
  await store.db.transaction().execute(async (trx) => {
    const hold = await holdFundsIn(trx, {
      accountId: account.id,
      amountMicros: 40_000,
      requestId: id,
      model: 'sandbox-image',
      endpoint: 'tasks.image',
      taskId: id,
    });
    await insertTask(trx, {
      id,
      account_id: account.id,
      key_id: null,
      request_id: id,
      kind: 'image',
      model: 'sandbox-image',
      status: left.status ?? 'queued',
      upstream_id: null,
      hold_id: hold.holdId,
      request: '{"model":"sandbox-image","prompt":"x"}',
      result: null,
      error: null,
      upstream_record: null,
      callback_url: null,
      attempts: 0,
      next_poll_at: 0,
      lease_until: left.status ? 1 : null,
      lease_owner: left.status ? 'engine_dead' : null,
      created_at: createdAt,
      updated_at: createdAt,
      finished_at: null,
      generation_attempts: left.generationAttempts ?? 0,
      prices: prices === undefined ? null : JSON.stringify(prices),
    });
  });
  return account.id;
}

const refunded = { balanceMicros: 1_000_000, heldMicros: 0, ledgerBalanceMicros: 1_000_000, ledgerHeldMicros: 0, consistent: true };

const engineWith = (image: TaskKindHandler, options: { leaseMs?: number; taskTimeoutMs?: number; maxGenerationAttempts?: number } = {}) =>
  createTaskEngine({
    store,
    catalogue,
    log: quiet,
    tickMs: 10,
    leaseMs: options.leaseMs ?? 150,
    taskTimeoutMs: options.taskTimeoutMs ?? 60_000,
    maxGenerationAttempts: options.maxGenerationAttempts ?? 3,
    pollIntervalMs: { image: 10, video: 10, erase: 10, minutes: 10 },
    handlers: { image, video: image, erase: image, minutes: image },
  });

test('a long poll keeps its lease, so a second engine does not start the same task', async () => {
  await queuedImageTask('img_long');
  let finishPoll!: () => void;
  let polls = 0;
  const slow: TaskKindHandler = {
    kind: 'image',
    webhookType: 'image',
    submit: async () => ({ upstreamId: null }),
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
    kind: 'image',
    webhookType: 'image',
    submit: async () => ({ upstreamId: null }),
    // A result that cannot be stored: JSON.stringify throws on a BigInt.
    poll: async () => ({ state: 'succeeded', result: { size: 1n }, units: { image: 1 } }),
  };
  await engineWith(broken, { taskTimeoutMs: 5_000 }).runOnce();
  const task = (await findTask(store.db, 'img_broken'))!;
  assert.equal(task.status, 'failed');
  assert.equal(JSON.parse(task.error!).code, 'finish_failed');
  assert.deepEqual(await checkAccountBalance(store, accountId), refunded);
});

/** A handler whose every poll starts a generation that fails with `error`, counting the polls. */
function failingGenerator(error: Error) {
  const handler = {
    polls: 0,
    kind: 'image',
    webhookType: 'image',
    submit: async () => ({ upstreamId: null }),
    poll: async (_task, _model, { startGeneration }) => {
      await startGeneration();
      handler.polls += 1;
      throw error;
    },
  } satisfies TaskKindHandler & { polls: number };
  return handler;
}

test('a task left in submitting by a dead instance is failed and its hold released, without calling the upstream', async () => {
  const accountId = await queuedImageTask('img_submit_left', Date.now(), { status: 'submitting' });
  const generator = failingGenerator(new Error('must not be called'));
  await engineWith(generator).runOnce();
  const task = (await findTask(store.db, 'img_submit_left'))!;
  assert.deepEqual(
    { status: task.status, code: JSON.parse(task.error!).code, polls: generator.polls },
    { status: 'failed', code: 'submit_interrupted', polls: 0 },
  );
  assert.deepEqual(await checkAccountBalance(store, accountId), refunded);
});

test('the generation attempt is counted in the store before the upstream is asked', async () => {
  await queuedImageTask('img_counted');
  let countSeenByUpstream = -1;
  const observing: TaskKindHandler = {
    kind: 'image',
    webhookType: 'image',
    submit: async () => ({ upstreamId: null }),
    poll: async (_task, _model, { startGeneration }) => {
      await startGeneration();
      countSeenByUpstream = (await findTask(store.db, 'img_counted'))!.generation_attempts;
      return { state: 'succeeded', result: {}, units: { image: 1 } };
    },
  };
  await engineWith(observing).runOnce();
  assert.equal(countSeenByUpstream, 1);
});

test('a generation that keeps failing is attempted the allowed number of times, then failed and refunded', async () => {
  const accountId = await queuedImageTask('img_retried');
  const generator = failingGenerator(new Error('connection reset'));
  const engine = engineWith(generator, { maxGenerationAttempts: 3 });
  for (let pass = 0; pass < 50 && (await findTask(store.db, 'img_retried'))!.status !== 'failed'; pass++) {
    await engine.runOnce();
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const task = (await findTask(store.db, 'img_retried'))!;
  assert.deepEqual(
    { status: task.status, code: JSON.parse(task.error!).code, generations: task.generation_attempts, polls: generator.polls },
    { status: 'failed', code: 'generation_attempts_exhausted', generations: 3, polls: 3 },
  );
  assert.deepEqual(await checkAccountBalance(store, accountId), refunded);
});

test('a claim that finds the last allowed generation started by a dead instance fails the task without generating again', async () => {
  const accountId = await queuedImageTask('img_crashed', Date.now(), { status: 'processing', generationAttempts: 3 });
  const generator = failingGenerator(new Error('must not be called'));
  await engineWith(generator, { maxGenerationAttempts: 3 }).runOnce();
  const task = (await findTask(store.db, 'img_crashed'))!;
  assert.deepEqual(
    { status: task.status, code: JSON.parse(task.error!).code, polls: generator.polls },
    { status: 'failed', code: 'generation_attempts_exhausted', polls: 0 },
  );
  assert.deepEqual(await checkAccountBalance(store, accountId), refunded);
});

test('a task settled after its model’s price changed is billed at, and names, the price list of its submission', async () => {
  const submitted = { image: 25_000 }; // the model's configured price is 40 000 an image now
  const accountId = await queuedImageTask('img_priced', Date.now(), {}, submitted);
  const oneImage: TaskKindHandler = {
    kind: 'image',
    webhookType: 'image',
    submit: async () => ({ upstreamId: null }),
    poll: async () => ({ state: 'succeeded', result: {}, units: { image: 1 } }),
  };
  await engineWith(oneImage).runOnce();
  const [row] = await listUsage(store.db, { accountId });
  assert.deepEqual(
    { amount: row?.amount_micros, priceId: row?.price_id, prices: row?.prices && JSON.parse(row.prices) },
    { amount: 25_000, priceId: priceListId(submitted), prices: submitted },
  );
});
