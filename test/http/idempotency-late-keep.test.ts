// An Idempotency-Key call answered while the store refuses writes: the caller gets the answer it
// paid for (never a 503 that invites a second, charged run), and the answer is kept for replays
// once the store takes writes again.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Fastify from 'fastify';
import { createAccount } from '../../src/billing/accounts.js';
import { runIdempotent } from '../../src/http/idempotency.js';
import { openStore } from '../../src/store/open.js';

test('an answer whose record the store refuses is still sent, and is replayed once the store takes writes again', async (t) => {
  const store = await openStore('sqlite::memory:');
  t.after(() => store.close());
  const account = await createAccount(store, { name: 'a', creditMicros: 0 });
  let runs = 0;
  const app = Fastify();
  app.decorateRequest('caller', null);
  app.addHook('onRequest', async (request) => {
    (request as unknown as { caller: object }).caller = { keyId: 'key_1', accountId: account.id, rpm: null, livemode: true };
  });
  app.post('/answer', (request, reply) =>
    runIdempotent({ store, instanceId: 'inst_1' }, request, reply, async () => {
      runs += 1;
      // The call is answered, its charge kept; then the store stops taking writes.
      store.failWrites?.('SQLITE_IOERR');
      return { statusCode: 200, body: { run: runs } };
    }),
  );
  t.after(() => app.close());
  const post = () => app.inject({ method: 'POST', url: '/answer', headers: { 'idempotency-key': 'k1' }, payload: { q: 1 } });

  const first = await post();
  assert.equal(first.statusCode, 200, first.body);
  assert.deepEqual(first.json(), { run: 1 });

  store.failWrites?.(null);
  const kept = async () =>
    (await store.db.selectFrom('idempotency').select('state').where('account_id', '=', account.id).where('key', '=', 'k1').executeTakeFirst())?.state;
  assert.equal(await kept(), 'running', 'not kept while the store refused');
  const deadline = Date.now() + 5_000; // the background keep tries again a second later
  while ((await kept()) !== 'done' && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  const replay = await post();
  assert.equal(replay.headers['idempotent-replayed'], 'true', replay.body);
  assert.deepEqual(replay.json(), { run: 1 });
  assert.equal(runs, 1, 'the call ran once');
});
