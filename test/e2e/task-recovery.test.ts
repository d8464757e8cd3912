// Tasks survive the process: a gateway killed with SIGKILL mid-task and started again finishes
// every task, ends every hold exactly once and sends every callback, and counts a generation it
// was killed in as an attempt; two processes on one PostgreSQL never finish the same task twice.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.js';
import { openStore } from '../../src/store/open.js';
import { ADMIN_TOKEN, eventually } from '../helpers/gateway.js';
import { dropTestSchemas, requirePostgresOrSkip, withTestSchema } from '../helpers/postgres.js';
import { type Receiver, startReceiver } from '../helpers/receiver.js';
import { callJson, serveOnFreePort, writeServeConfig } from '../helpers/serving.js';

const postgres = await requirePostgresOrSkip('multi-process task engine on PostgreSQL');

const writeConfig = (dir: string, sandbox: Sandbox, store: string, tasks: Record<string, unknown> = {}) =>
  writeServeConfig(dir, sandbox.url, store, {
    network: { allow_private_urls: true },
    limits: { default_rpm: 100_000, shutdown_grace_ms: 2_000 },
    tasks: { poll_interval_ms: { image: 100, video: 100, erase: 100, minutes: 100 }, tick_ms: 50, lease_ms: 1_500, submit_lease_ms: 1_500, ...tasks },
    webhooks: { retry_delays_ms: [200, 400, 800] },
  });

async function accountWithKey(base: string, receiver: Receiver) {
  const account = (await callJson(base, ADMIN_TOKEN, 'POST', '/admin/accounts', { name: 'tasks', credit_micros: 50_000_000 })).body;
  const key = (await callJson(base, ADMIN_TOKEN, 'POST', `/admin/accounts/${account.id}/keys`, {})).body.key as string;
  receiver.secret = (await callJson(base, ADMIN_TOKEN, 'GET', `/admin/accounts/${account.id}/webhook-secret`)).body.secret;
  return { accountId: account.id as string, key };
}

/** Every hold of the account ended exactly once: one hold row and one settle or release row per hold id. */
function assertHoldsEndedOnce(ledger: { kind: string; hold_id: string | null }[]) {
  const byHold = new Map<string, string[]>();
  for (const row of ledger) if (row.hold_id) byHold.set(row.hold_id, [...(byHold.get(row.hold_id) ?? []), row.kind]);
  for (const [holdId, kinds] of byHold) {
    assert.equal(kinds.filter((k) => k === 'hold').length, 1, `${holdId}: ${kinds}`);
    assert.equal(kinds.filter((k) => k === 'settle' || k === 'release').length, 1, `${holdId}: ${kinds}`);
  }
  return byHold.size;
}

describe('task recovery', () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  });

  test('a gateway killed mid-task and started again finishes every task, ends every hold once and calls back', async () => {
    const sandbox = await startSandbox({ port: 0, taskMs: 1_500 });
    const receiver = await startReceiver();
    cleanups.push(
      () => sandbox.close(),
      () => receiver.close(),
    );
    const dir = mkdtempSync(path.join(tmpdir(), 'tollroute-crash-'));
    const configFile = writeConfig(dir, sandbox, `sqlite:${path.join(dir, 'tollroute.db')}`);

    const first = await serveOnFreePort(configFile, dir);
    const { accountId, key } = await accountWithKey(first.base, receiver);
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      ids.push(
        (
          await callJson(first.base, key, 'POST', '/v1/videos/generations', {
            model: 'sandbox-video',
            content: [{ type: 'text', text: `clip ${i}` }],
            callback_url: receiver.url,
          })
        ).body.id,
      );
    }
    for (let i = 0; i < 2; i++) {
      ids.push(
        (await callJson(first.base, key, 'POST', '/v1/images/async', { model: 'sandbox-image', prompt: `image ${i}`, callback_url: receiver.url })).body.id,
      );
    }
    first.process.child.kill('SIGKILL');
    await first.process.exited;

    const second = await serveOnFreePort(configFile, dir);
    cleanups.push(async () => {
      second.process.child.kill('SIGTERM');
      await second.process.exited;
    });
    const read = (id: string) => callJson(second.base, key, 'GET', id.startsWith('img_') ? `/v1/images/async/${id}` : `/v1/videos/generations/${id}`);
    await eventually(async () => {
      const states = await Promise.all(ids.map(async (id) => (await read(id)).body.status));
      return states.every((s) => s === 'succeeded');
    }, 20_000);
    const deliveries = await eventually(() => {
      const verified = new Set(receiver.deliveries.filter((d) => d.verified).map((d) => d.payload.task_id));
      return ids.every((id) => verified.has(id)) && verified;
    }, 10_000);
    assert.equal(deliveries.size, ids.length);

    const account = (await callJson(second.base, ADMIN_TOKEN, 'GET', `/admin/accounts/${accountId}`)).body;
    assert.equal(account.held_micros, 0);
    const ledger = (await callJson(second.base, ADMIN_TOKEN, 'GET', `/admin/accounts/${accountId}/ledger?limit=1000`)).body.data;
    assert.equal(assertHoldsEndedOnce(ledger), ids.length);
    assert.equal(account.balance_micros, 50_000_000 - 4 * 5 * 100_000 - 2 * 40_000);
  });

  test('a gateway killed mid-generation counts that generation: the next one generates only in the attempts left and ends the task once', async () => {
    const sandbox = await startSandbox({ port: 0, taskMs: 300 });
    const receiver = await startReceiver();
    cleanups.push(
      () => sandbox.close(),
      () => receiver.close(),
    );
    const dir = mkdtempSync(path.join(tmpdir(), 'tollroute-crash-generation-'));
    const configFile = writeConfig(dir, sandbox, `sqlite:${path.join(dir, 'tollroute.db')}`, { max_generation_attempts: 2 });
    // The first generation is still running when the gateway dies; every later one answers garbage.
    await callJson(sandbox.url, '', 'POST', '/__sandbox/faults', { kind: 'images', delay_ms: 10_000, times: 1 });
    await callJson(sandbox.url, '', 'POST', '/__sandbox/faults', { kind: 'images', status: 200, body: 'garbage' });
    const generations = async () =>
      (await callJson(sandbox.url, '', 'GET', '/__sandbox/requests')).body.data.filter((r: { kind: string }) => r.kind === 'images').length;

    const first = await serveOnFreePort(configFile, dir);
    const { accountId, key } = await accountWithKey(first.base, receiver);
    const id = (await callJson(first.base, key, 'POST', '/v1/images/async', { model: 'sandbox-image', prompt: 'cut off', callback_url: receiver.url })).body
      .id as string;
    await eventually(async () => (await generations()) === 1);
    first.process.child.kill('SIGKILL');
    await first.process.exited;

    const second = await serveOnFreePort(configFile, dir);
    cleanups.push(async () => {
      second.process.child.kill('SIGTERM');
      await second.process.exited;
    });
    const done = await eventually(async () => {
      const { body } = await callJson(second.base, key, 'GET', `/v1/images/async/${id}`);
      return body.status === 'failed' && body;
    }, 20_000);
    assert.equal(done.error, 'the upstream did not complete the work in 2 attempts');
    assert.equal(await generations(), 2, 'one killed generation and one more, never a third');
    const delivery = await eventually(() => receiver.deliveries.find((d) => d.payload.task_id === id), 10_000);
    assert.deepEqual({ status: delivery.payload.status, verified: delivery.verified }, { status: 'failed', verified: true });
    const account = (await callJson(second.base, ADMIN_TOKEN, 'GET', `/admin/accounts/${accountId}`)).body;
    assert.deepEqual({ balance: account.balance_micros, held: account.held_micros }, { balance: 50_000_000, held: 0 });
    const ledger = (await callJson(second.base, ADMIN_TOKEN, 'GET', `/admin/accounts/${accountId}/ledger?limit=1000`)).body.data;
    assert.equal(assertHoldsEndedOnce(ledger), 1);
  });

  test('two gateway processes on one PostgreSQL never finish the same task twice', { skip: !postgres }, async () => {
    const sandbox = await startSandbox({ port: 0, taskMs: 600 });
    const receiver = await startReceiver();
    const { url: storeUrl, schema } = withTestSchema(postgres!);
    cleanups.push(
      () => sandbox.close(),
      () => receiver.close(),
      () => dropTestSchemas(postgres!, [schema]),
    );
    const dir = mkdtempSync(path.join(tmpdir(), 'tollroute-pg-tasks-'));
    const configFile = writeConfig(dir, sandbox, storeUrl);
    const instances = [await serveOnFreePort(configFile, dir), await serveOnFreePort(configFile, dir)];
    for (const instance of instances) {
      cleanups.push(async () => {
        instance.process.child.kill('SIGTERM');
        await instance.process.exited;
      });
    }
    const { accountId, key } = await accountWithKey(instances[0]!.base, receiver);
    const ids = await Promise.all(
      Array.from(
        { length: 16 },
        async (_, i) =>
          (
            await callJson(instances[i % 2]!.base, key, 'POST', '/v1/videos/generations', {
              model: 'sandbox-video',
              content: [{ type: 'text', text: `shared ${i}` }],
              callback_url: receiver.url,
            })
          ).body.id as string,
      ),
    );
    await eventually(() => ids.every((id) => receiver.deliveries.some((d) => d.payload.task_id === id)), 20_000);

    const store = await openStore(storeUrl);
    cleanups.push(() => store.close());
    const ledger = await store.db.selectFrom('ledger').select(['kind', 'hold_id']).where('account_id', '=', accountId).execute();
    assert.equal(assertHoldsEndedOnce(ledger), ids.length);
    // One event per task, delivered once: no task reached its terminal state in both processes.
    const outbox = await store.db.selectFrom('webhook_outbox').select(['task_id']).where('account_id', '=', accountId).execute();
    assert.deepEqual(outbox.map((r) => r.task_id).sort(), [...ids].sort());
    assert.equal(receiver.deliveries.length, ids.length);
  });
});
