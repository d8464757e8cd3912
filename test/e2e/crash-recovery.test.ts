// Calls cut off by a crash (SIGKILL): each instance heartbeats, and the open holds of a dead one are
// ended within a minute by whichever instance sweeps first, restarted or another: a stream is billed
// the output it recorded as delivered, anything else released; its Idempotency-Keys run again.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { request } from 'undici';
import { checkAccountBalance } from '../../src/billing/accounts.js';
import { parseProgress } from '../../src/billing/recovery.js';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.js';
import { openStore, type Store } from '../../src/store/open.js';
import { ADMIN_TOKEN, eventually } from '../helpers/gateway.js';
import { dropTestSchemas, requirePostgresOrSkip, withTestSchema } from '../helpers/postgres.js';
import type { ServingProcess } from '../helpers/processes.js';
import { callJson, serveOnFreePort, writeServeConfig } from '../helpers/serving.js';

const postgres = await requirePostgresOrSkip('crash recovery across instances on PostgreSQL');
const RECOVERY = { heartbeat_ms: 100, dead_after_ms: 1_000, sweep_ms: 200, progress_interval_ms: 100 };

const writeConfig = (dir: string, sandbox: Sandbox, store: string) =>
  writeServeConfig(dir, sandbox.url, store, { limits: { default_rpm: 100_000, shutdown_grace_ms: 1_000 }, recovery: RECOVERY });

/** Starts a long stream and resolves once `chunks` events have arrived; the stream is left running. */
async function streamUntil(base: string, key: string, chunks: number) {
  const res = await request(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'sandbox-chat', stream: true, messages: [{ role: 'user', content: '[[words:2000]]' }] }),
  });
  let seen = 0;
  await new Promise<void>((resolve) => {
    res.body.on('data', (chunk: Buffer) => {
      seen += chunk.toString().split('\n\n').length - 1;
      if (seen >= chunks) resolve();
    });
    res.body.on('error', () => {});
  });
}

/** With `keyLimits`, the calls use a key of the account that carries them (issued over the account API). */
async function crashScene(base: string, sandbox: Sandbox, keyLimits?: Record<string, unknown>) {
  const account = (await callJson(base, ADMIN_TOKEN, 'POST', '/admin/accounts', { name: 'crash', credit_micros: 10_000_000 })).body;
  const owner = (await callJson(base, ADMIN_TOKEN, 'POST', `/admin/accounts/${account.id}/keys`, {})).body.key as string;
  const key = keyLimits ? ((await callJson(base, owner, 'POST', '/v1/account/keys', { name: 'capped', ...keyLimits })).body.key as string) : owner;
  await callJson(sandbox.url, '', 'POST', '/__sandbox/faults', { kind: 'chat', chunk_delay_ms: 20 });
  await callJson(sandbox.url, '', 'POST', '/__sandbox/faults', { kind: 'search', delay_ms: 60_000 });
  await streamUntil(base, key, 30);
  // A plain call in flight with an Idempotency-Key: its retry must not wait 24 hours.
  void callJson(base, key, 'POST', '/v1/search', { Type: 'web', Query: 'cut off' }, { 'idempotency-key': 'in-flight' }).catch(() => {});
  return { accountId: account.id as string, key };
}

/** Once the stream has recorded progress and the search holds its funds. */
async function waitForProgress(store: Store, accountId: string) {
  return eventually(async () => {
    const holds = await store.db.selectFrom('holds').selectAll().where('account_id', '=', accountId).execute();
    const stream = holds.find((h) => h.endpoint === 'chat.completions' && parseProgress(h.progress));
    return holds.length === 2 && stream && holds;
  }, 10_000);
}

async function assertRecovered(store: Store, accountId: string, openedAt: { stream: string; search: string }, progressBefore: number) {
  const holds = await eventually(async () => {
    const rows = await store.db.selectFrom('holds').selectAll().where('account_id', '=', accountId).execute();
    return rows.every((h) => h.state !== 'open') && rows;
  }, 15_000);
  const stream = holds.find((h) => h.id === openedAt.stream)!;
  const search = holds.find((h) => h.id === openedAt.search)!;
  const recorded = parseProgress(stream.progress)!;
  assert.equal(stream.state, 'settled');
  assert.ok(recorded.charge_micros >= progressBefore, 'the last recorded progress is what is billed');
  assert.equal(stream.charged_micros, recorded.charge_micros);
  assert.ok(recorded.units.output_token! >= 30 - 2, 'the output delivered before the kill');
  assert.equal(search.state, 'released');
  const usage = await store.db.selectFrom('usage_all').selectAll().where('account_id', '=', accountId).execute();
  assert.deepEqual(
    usage.map((u) => [u.hold_id, u.amount_micros, u.flags]),
    [[stream.id, recorded.charge_micros, 'recovered']],
  );
  const check = await checkAccountBalance(store, accountId);
  assert.deepEqual([check.consistent, check.heldMicros, check.balanceMicros], [true, 0, 10_000_000 - recorded.charge_micros]);
}

const ledgerKinds = async (store: Store, accountId: string) =>
  (await store.db.selectFrom('ledger').select('kind').where('account_id', '=', accountId).orderBy('id').execute()).map((row) => row.kind);

describe('crash recovery', () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  });
  const stop = (serving: { process: ServingProcess }) => async () => {
    serving.process.child.kill('SIGTERM');
    await serving.process.exited;
  };

  /**
   * A gateway on SQLite with nothing of its own writing into the store during a call (the outbox's
   * poll, the price refresh, the low-balance sweep; `recovery` as given): such a statement would
   * write a call's hold alone first. An account of `creditMicros` and its key.
   */
  async function quietGateway(name: string, creditMicros: number, recovery?: Record<string, number>) {
    const sandbox = await startSandbox({ port: 0 });
    cleanups.push(() => sandbox.close());
    const dir = mkdtempSync(path.join(tmpdir(), `tollroute-kill-${name}-`));
    const storeUrl = `sqlite:${path.join(dir, 'tollroute.db')}`;
    const quiet = {
      limits: { default_rpm: 100_000 },
      webhooks: { poll_interval_ms: 60_000 },
      prices: { refresh_ms: 60_000 },
      low_balance: { sweep_ms: 60_000 },
      ...(recovery && { recovery }),
    };
    const configFile = writeServeConfig(dir, sandbox.url, storeUrl, quiet);
    const first = await serveOnFreePort(configFile, dir);
    const account = (await callJson(first.base, ADMIN_TOKEN, 'POST', '/admin/accounts', { name, credit_micros: creditMicros })).body;
    const key = (await callJson(first.base, ADMIN_TOKEN, 'POST', `/admin/accounts/${account.id}/keys`, {})).body.key as string;
    return { sandbox, dir, storeUrl, configFile, first, accountId: account.id as string, key };
  }

  test('after kill -9 and a restart, a stream is billed what it recorded as delivered, a plain call released, its key retryable', async () => {
    const sandbox = await startSandbox({ port: 0 });
    cleanups.push(() => sandbox.close());
    const dir = mkdtempSync(path.join(tmpdir(), 'tollroute-kill-'));
    const storeUrl = `sqlite:${path.join(dir, 'tollroute.db')}`;
    const configFile = writeConfig(dir, sandbox, storeUrl);
    const first = await serveOnFreePort(configFile, dir);
    const { accountId, key } = await crashScene(first.base, sandbox);
    const store = await openStore(storeUrl);
    cleanups.push(() => store.close());
    const open = await waitForProgress(store, accountId);
    const progressBefore = parseProgress(open.find((h) => h.endpoint === 'chat.completions')!.progress)!.charge_micros;
    first.process.child.kill('SIGKILL');
    await first.process.exited;

    const killedAt = Date.now();
    const second = await serveOnFreePort(configFile, dir);
    cleanups.push(stop(second));
    const ids = { stream: open.find((h) => h.endpoint === 'chat.completions')!.id, search: open.find((h) => h.endpoint === 'search')!.id };
    await assertRecovered(store, accountId, ids, progressBefore);
    assert.ok(Date.now() - killedAt < 60_000, 'ended within a minute');

    await callJson(sandbox.url, '', 'DELETE', '/__sandbox/faults');
    const retried = await callJson(second.base, key, 'POST', '/v1/search', { Type: 'web', Query: 'cut off' }, { 'idempotency-key': 'in-flight' });
    assert.equal(retried.status, 200, 'the dead instance’s Idempotency-Key runs again');
  });

  test('after kill -9 just after a plain call was answered from the settle journal, the restart charges it exactly once', async () => {
    const { dir, storeUrl, configFile, first, accountId, key } = await quietGateway('journal', 100_000);
    const answered = await callJson(first.base, key, 'POST', '/v1/search', { Type: 'web', Query: 'answered, then killed' });
    first.process.child.kill('SIGKILL'); // the store writes it within 20 ms, or after the next call's upstream request: usually not yet
    await first.process.exited;
    assert.equal(answered.status, 200);
    assert.ok(readFileSync(path.join(dir, 'answered-settles.jsonl'), 'utf8').includes(accountId), 'answered from the journal');

    const second = await serveOnFreePort(configFile, dir);
    cleanups.push(stop(second));
    const store = await openStore(storeUrl);
    cleanups.push(() => store.close());
    assert.deepEqual(await ledgerKinds(store, accountId), ['credit', 'hold', 'settle']);
    const check = await checkAccountBalance(store, accountId);
    assert.deepEqual([check.consistent, check.heldMicros, check.balanceMicros], [true, 0, 100_000 - 5_000]);
  });

  test("after kill -9 while a stream's hold is only in the settle journal, the restart ends it before serving: held, released, nothing charged", async () => {
    // Nor heartbeat, progress record or sweep within the test (the hold's age timer comes at 250 ms; the kill well before).
    const recovery = { heartbeat_ms: 60_000, dead_after_ms: 600_000, sweep_ms: 60_000, progress_interval_ms: 60_000 };
    const { sandbox, dir, storeUrl, configFile, first, accountId, key } = await quietGateway('stream-journal', 10_000_000, recovery);
    await callJson(sandbox.url, '', 'POST', '/__sandbox/faults', { kind: 'chat', chunk_delay_ms: 20 });
    await streamUntil(first.base, key, 1);
    first.process.child.kill('SIGKILL');
    await first.process.exited;
    const journal = readFileSync(path.join(dir, 'answered-settles.jsonl'), 'utf8');
    assert.ok(journal.includes(accountId), "the stream's hold was journaled");
    const holdsOf = (store: Store) => store.db.selectFrom('holds').select(['state', 'charged_micros']).where('account_id', '=', accountId).execute();
    // On a machine slow enough that the kill came past the hold's 250 ms, its age wrote it, open.
    const beforeRestart = await openStore(storeUrl);
    const writtenByAge = (await holdsOf(beforeRestart)).length > 0;
    await beforeRestart.close();

    const second = await serveOnFreePort(configFile, dir);
    cleanups.push(stop(second));
    const store = await openStore(storeUrl);
    cleanups.push(() => store.close());
    if (writtenByAge) {
      assert.deepEqual(await holdsOf(store), [{ state: 'open', charged_micros: null }], 'its row is there: left to the sweep');
      return;
    }
    assert.deepEqual(await holdsOf(store), [{ state: 'released', charged_micros: null }], 'ended by the restart, not left to a sweep');
    assert.deepEqual(await ledgerKinds(store, accountId), ['credit', 'hold', 'release']);
    const check = await checkAccountBalance(store, accountId);
    assert.deepEqual([check.consistent, check.heldMicros, check.balanceMicros], [true, 0, 10_000_000]);
  });

  test('after kill -9 and a restart, a capped key’s spend counter equals what its cut-off calls were billed', async () => {
    const sandbox = await startSandbox({ port: 0 });
    cleanups.push(() => sandbox.close());
    const dir = mkdtempSync(path.join(tmpdir(), 'tollroute-kill-cap-'));
    const storeUrl = `sqlite:${path.join(dir, 'tollroute.db')}`;
    const configFile = writeConfig(dir, sandbox, storeUrl);
    const first = await serveOnFreePort(configFile, dir);
    const { accountId } = await crashScene(first.base, sandbox, { daily_cap_micros: 5_000_000 });
    const store = await openStore(storeUrl);
    cleanups.push(() => store.close());
    const open = await waitForProgress(store, accountId);
    assert.ok(
      open.every((h) => h.cap_periods !== null),
      'both holds reserved in the key’s counters',
    );
    first.process.child.kill('SIGKILL');
    await first.process.exited;

    const second = await serveOnFreePort(configFile, dir);
    cleanups.push(stop(second));
    const ended = await eventually(async () => {
      const rows = await store.db.selectFrom('holds').selectAll().where('account_id', '=', accountId).execute();
      return rows.every((h) => h.state !== 'open') && rows;
    }, 15_000);
    const billed = ended.reduce((sum, h) => sum + (h.charged_micros ?? 0), 0);
    assert.ok(billed > 0, 'the stream was billed its delivered output');
    const counters = await store.db.selectFrom('key_spend').select(['period', 'spent_micros']).where('key_id', '=', ended[0]!.key_id!).execute();
    assert.deepEqual(
      counters.map((c) => Number(c.spent_micros)),
      [billed],
    );
  });

  test('on PostgreSQL another live instance ends the holds of one that was killed, without any restart', { skip: !postgres }, async () => {
    const sandbox = await startSandbox({ port: 0 });
    cleanups.push(() => sandbox.close());
    const { url, schema } = withTestSchema(postgres!);
    cleanups.push(() => dropTestSchemas(postgres!, [schema]));
    const dir = mkdtempSync(path.join(tmpdir(), 'tollroute-kill-pg-'));
    const configFile = writeConfig(dir, sandbox, url);
    const [doomed, survivor] = await Promise.all([serveOnFreePort(configFile, dir), serveOnFreePort(configFile, dir)]);
    cleanups.push(stop(survivor));
    const { accountId } = await crashScene(doomed.base, sandbox);
    const store = await openStore(url);
    cleanups.push(() => store.close());
    const open = await waitForProgress(store, accountId);
    const progressBefore = parseProgress(open.find((h) => h.endpoint === 'chat.completions')!.progress)!.charge_micros;
    doomed.process.child.kill('SIGKILL');
    await doomed.process.exited;
    const ids = { stream: open.find((h) => h.endpoint === 'chat.completions')!.id, search: open.find((h) => h.endpoint === 'search')!.id };
    await assertRecovered(store, accountId, ids, progressBefore);
  });
});
