// A store that refuses writes (a full disk): the gateway says so at /healthz, refuses new calls
// with 503 and logs the real cause; a settle it could not write is kept, retried until it lands,
// and survives a restart through its journal. No answer goes out free, none is charged twice.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, beforeEach, describe, test } from 'node:test';
import { request } from 'undici';
import { ADMIN_AUTH, eventually, startTestGateway, type TestGateway } from '../helpers/gateway.js';

const fastRecovery = { recovery: { heartbeat_ms: 100, settle_retry_ms: 50 }, limits: { shutdown_grace_ms: 300 } };
const SEARCH_PRICE = 5_000;
const search = (gw: TestGateway, key: string) => gw.call(key, 'POST', '/v1/search', { Type: 'web', Query: 'disk full' });
const health = async (gw: TestGateway) => {
  const res = await request(`${gw.url}/healthz`);
  return { status: res.statusCode, body: (await res.body.json()) as any };
};
const failWrites = (gw: TestGateway, code: string | null) => gw.gateway.store.failWrites!(code);

describe('a store that refuses writes', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway(fastRecovery);
  });
  after(() => gw.close());
  // Each test starts from a store the gateway knows to be writable again: the one before may have
  // left it unhealthy until the next probe (and new calls would be refused before going upstream).
  beforeEach(() => eventually(async () => (await health(gw)).status === 200));

  test('makes new calls 503 and /healthz unhealthy, with SQLITE_FULL in the log, then recovers by itself', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 100_000 });
    failWrites(gw, 'SQLITE_FULL');
    try {
      assert.deepEqual(await search(gw, key), {
        status: 503,
        body: { error: 'the gateway cannot record charges right now; retry shortly', type: 'server_error' },
      });
      const unhealthy = await health(gw);
      assert.equal(unhealthy.status, 503);
      assert.match(unhealthy.body.error, /SQLITE_FULL/);
      assert.ok(
        gw.logs.some((line) => (line as any).code === 'SQLITE_FULL'),
        'the real cause is logged',
      );
      assert.ok(!gw.logText().includes('cannot rollback'));
    } finally {
      failWrites(gw, null);
    }
    await eventually(async () => (await health(gw)).status === 200);
    assert.equal((await search(gw, key)).status, 200);
    assert.deepEqual(await gw.settled(accountId), { ...(await gw.balance(accountId)), balance_micros: 100_000 - SEARCH_PRICE, held_micros: 0 });
  });

  /** Runs `call` with the store failing (a full disk) from the moment its hold is decided until it is answered. */
  async function diskFullAfterDecision<T>(call: () => Promise<T>): Promise<T> {
    const hotLedger = gw.gateway.store.hotLedger!;
    const decide = hotLedger.holdAtOnce!.bind(hotLedger);
    hotLedger.holdAtOnce = (entry) => {
      const decided = decide(entry);
      failWrites(gw, 'SQLITE_FULL');
      return decided;
    };
    try {
      return await call();
    } finally {
      hotLedger.holdAtOnce = decide;
      failWrites(gw, null);
    }
  }

  test('a call answered in one piece whose store fails at its settle is answered, and charged once the store takes writes', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 100_000 });
    // The disk fills at the settle: whether a statement of the store's wrote the hold alone before
    // it (the settle is then kept and retried) or not (it goes to the journal), the caller is answered.
    const hotLedger = gw.gateway.store.hotLedger!;
    const settle = hotLedger.settle.bind(hotLedger);
    hotLedger.settle = (entry) => {
      failWrites(gw, 'SQLITE_FULL');
      return settle(entry);
    };
    let answer: { status: number };
    try {
      answer = await search(gw, key);
    } finally {
      hotLedger.settle = settle;
      failWrites(gw, null);
    }
    assert.equal(answer.status, 200, 'its settle is in the journal (a full disk would refuse it there too: a 503)');
    const settled = await gw.settled(accountId);
    assert.deepEqual([settled.balance_micros, settled.held_micros], [100_000 - SEARCH_PRICE, 0]);
    assert.equal((await gw.admin('GET', `/admin/accounts/${accountId}/usage`)).body.data.length, 1);
  });

  test('a stream whose store fails after its hold was decided is answered, its hold in the settle journal, and charged once the store takes writes', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 100_000 });
    const text = await diskFullAfterDecision(async () => {
      const res = await request(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'sandbox-chat', stream: true, messages: [{ role: 'user', content: 'tell me a story [[words:50]]' }] }),
      });
      assert.equal(res.statusCode, 200, 'its hold is in the journal (a full disk would refuse it there too: a 503)');
      return res.body.text();
    });
    assert.match(text, /data: \[DONE\]/);
    const settled = await gw.settled(accountId);
    assert.equal(settled.held_micros, 0);
    assert.ok(settled.balance_micros < 100_000, 'charged');
    const ledger = (await gw.admin('GET', `/admin/accounts/${accountId}/ledger`)).body.data as { kind: string }[];
    assert.deepEqual(ledger.map((row) => row.kind).reverse(), ['credit', 'hold', 'settle']);
    assert.equal((await gw.admin('GET', `/admin/accounts/${accountId}/usage`)).body.data.length, 1);
  });

  test('a settle refused after the answer was made is kept and retried: the caller gets the answer and pays once', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 100_000 });
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'search', delay_ms: 300, times: 1 });
    const answer = search(gw, key);
    await new Promise((resolve) => setTimeout(resolve, 100));
    // A read of the store writes the holds decided in memory first: this one is written, then the disk fills.
    assert.equal((await gw.balance(accountId)).held_micros, SEARCH_PRICE);
    failWrites(gw, 'SQLITE_FULL');
    try {
      assert.equal((await answer).status, 200, 'the answer earned is delivered');
      assert.equal((await gw.balance(accountId)).held_micros, SEARCH_PRICE, 'the hold waits for its settle');
      const metrics = await (await request(`${gw.url}/metrics`, ADMIN_AUTH)).body.text();
      assert.match(metrics, /tollroute_pending_settlements 1/);
      assert.match(metrics, /tollroute_store_writable 0/);
    } finally {
      failWrites(gw, null);
    }
    assert.deepEqual(await gw.settled(accountId), { ...(await gw.balance(accountId)), balance_micros: 100_000 - SEARCH_PRICE, held_micros: 0 });
    assert.equal((await gw.admin('GET', `/admin/accounts/${accountId}/usage`)).body.data.length, 1);
  });
});

test('a settle still refused at shutdown is journaled and lands when the gateway starts again', async () => {
  const first = await startTestGateway(fastRecovery);
  const dataDir = path.dirname(first.storeUrl.slice('sqlite:'.length));
  const { accountId, key } = await first.account({ creditMicros: 100_000 });
  await first.sandboxControl('POST', '/__sandbox/faults', { kind: 'search', delay_ms: 300, times: 1 });
  const answer = search(first, key);
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal((await first.balance(accountId)).held_micros, SEARCH_PRICE, 'the hold is written');
  failWrites(first, 'SQLITE_FULL');
  assert.equal((await answer).status, 200);
  await first.gateway.close(); // the store still refuses: the settle stays in the journal
  await first.sandbox.close();

  const second = await startTestGateway({ ...fastRecovery, store: first.storeUrl, data_dir: dataDir });
  try {
    assert.deepEqual(await second.balance(accountId), { ...(await second.balance(accountId)), balance_micros: 100_000 - SEARCH_PRICE, held_micros: 0 });
    const usage = (await second.admin('GET', `/admin/accounts/${accountId}/usage`)).body.data;
    assert.deepEqual(
      usage.map((u: any) => [u.units, u.amount_micros]),
      [[{ call: 1 }, SEARCH_PRICE]],
    );
  } finally {
    await second.close();
  }
});
