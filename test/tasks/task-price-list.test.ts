// A task is billed at the prices of its submission (tasks.prices), whatever its model costs when it
// finishes; its usage row names that price list.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createAccount } from '../../src/billing/accounts.js';
import { holdFundsIn } from '../../src/billing/ledger.js';
import { priceListId } from '../../src/billing/price-lists.js';
import { buildConfig } from '../../src/config/load.js';
import { sandboxCatalogue } from '../../src/config/sandbox-catalogue.js';
import { createCatalogue } from '../../src/pipeline/catalogue.js';
import { openStore, type Store } from '../../src/store/open.js';
import { insertTask } from '../../src/store/tasks.js';
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

/** Succeeds at once with one image. */
const oneImage: TaskKindHandler = {
  kind: 'image',
  webhookType: 'image',
  submit: async () => ({ upstreamId: null }),
  poll: async () => ({ state: 'succeeded', result: {}, units: { image: 1 } }),
};

/** A queued image task submitted at `prices`, its hold taken as submit.ts takes it. */
async function submittedAt(prices: object) {
  const account = await createAccount(store, { name: 'tasks', creditMicros: 1_000_000 });
  await store.db.transaction().execute(async (trx) => {
    const hold = await holdFundsIn(trx, {
      accountId: account.id,
      amountMicros: 40_000,
      requestId: 'img_1',
      model: 'sandbox-image',
      endpoint: 'tasks.image',
      taskId: 'img_1',
    });
    // biome-ignore format: a task row's many fields
    await insertTask(trx, {
      id: 'img_1', account_id: account.id, key_id: null, request_id: 'img_1', kind: 'image', model: 'sandbox-image', status: 'queued',
      upstream_id: null, hold_id: hold.holdId, request: '{"model":"sandbox-image","prompt":"x"}', result: null, error: null,
      upstream_record: null, callback_url: null, attempts: 0, next_poll_at: 0, lease_until: null, lease_owner: null,
      created_at: 1, updated_at: 1, finished_at: null, generation_attempts: 0, prices: JSON.stringify(prices),
    });
  });
  return account.id;
}

test('a task settled after its model’s price changed names the price list of its submission', async () => {
  const submitted = { image: 25_000 }; // the model's configured price is 40 000 an image now
  const accountId = await submittedAt(submitted);
  const engine = createTaskEngine({
    store,
    catalogue,
    log: quiet,
    tickMs: 10,
    leaseMs: 150,
    taskTimeoutMs: 60_000,
    maxGenerationAttempts: 3,
    pollIntervalMs: { image: 10, video: 10, erase: 10, minutes: 10 },
    handlers: { image: oneImage, video: oneImage, erase: oneImage, minutes: oneImage },
  });
  await engine.runOnce();
  const [row] = await listUsage(store.db, { accountId });
  assert.deepEqual(
    { amount: row?.amount_micros, priceId: row?.price_id, prices: row?.prices && JSON.parse(row.prices) },
    { amount: 25_000, priceId: priceListId(submitted), prices: submitted },
  );
});
