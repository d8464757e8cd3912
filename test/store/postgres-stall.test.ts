// A PostgreSQL that stops answering (a partition, a stalled network: the proxy holds every byte)
// fails the store's statements within its query and connect timeouts, as store faults, and the
// store works again once the network does.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { sql } from 'kysely';
import { createAccount } from '../../src/billing/accounts.js';
import { holdFunds } from '../../src/billing/ledger.js';
import { isStoreFault } from '../../src/store/health.js';
import { openStore } from '../../src/store/open.js';
import { freshSchemaUrls, requirePostgresOrSkip } from '../helpers/postgres.js';
import { startTcpProxy } from '../helpers/tcp-proxy.js';

const baseUrl = await requirePostgresOrSkip('a stalled PostgreSQL');
const nextUrl = baseUrl ? freshSchemaUrls(baseUrl) : undefined;

/** The store URL through a proxy the test can freeze, with short timeouts. */
async function storeThroughProxy() {
  const url = new URL(nextUrl!());
  const proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) });
  after(() => proxy.close());
  url.hostname = '127.0.0.1';
  url.port = String(proxy.port);
  url.searchParams.set('query_timeout_ms', '500');
  url.searchParams.set('connect_timeout_ms', '500');
  const store = await openStore(url.toString());
  after(() => store.close());
  return { store, proxy };
}

/** How long `run` took to fail, and the error. */
async function failure(run: () => Promise<unknown>): Promise<{ ms: number; error: unknown }> {
  const started = Date.now();
  try {
    await run();
  } catch (error) {
    return { ms: Date.now() - started, error };
  }
  throw new Error('expected a failure');
}

test('a statement on a stalled PostgreSQL fails within the query timeout as a store fault', { skip: !baseUrl }, async () => {
  const { store, proxy } = await storeThroughProxy();
  await sql`select 1`.execute(store.db); // a connection is open and idle in the pool
  proxy.freeze();
  const { ms, error } = await failure(() => sql`select 1`.execute(store.db));
  assert.ok(ms < 3_000, `failed after ${ms} ms`);
  assert.equal(isStoreFault(error), true);
  proxy.thaw();
});

test('a hot-ledger step on a stalled PostgreSQL fails within the query timeout as a store fault', { skip: !baseUrl }, async () => {
  const { store, proxy } = await storeThroughProxy();
  const account = await createAccount(store, { name: 'stalled', creditMicros: 1_000 });
  proxy.freeze();
  const { ms, error } = await failure(() => holdFunds(store, { accountId: account.id, amountMicros: 10, requestId: 'r', model: 'm', endpoint: 'e' }));
  assert.ok(ms < 3_000, `failed after ${ms} ms`);
  assert.equal(isStoreFault(error), true);
  proxy.thaw();
});

test('the store answers again once the stalled network does', { skip: !baseUrl }, async () => {
  const { store, proxy } = await storeThroughProxy();
  await sql`select 1`.execute(store.db);
  proxy.freeze();
  await failure(() => sql`select 1`.execute(store.db));
  await failure(() => sql`select 1`.execute(store.db));
  proxy.thaw();
  const { rows } = await sql<{ one: number }>`select 1 as one`.execute(store.db);
  assert.deepEqual(rows, [{ one: 1 }]);
});
