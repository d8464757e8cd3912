// The queries behind the account API (/v1/account), run on SQLite by account-queries-sqlite.test.ts
// and on PostgreSQL by account-queries-postgres.test.ts.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createAccount } from '../../src/billing/accounts.js';
import { issueApiKey } from '../../src/billing/api-keys.js';
import { listAccountKeys, recordKeyUses, revokeApiKey } from '../../src/store/api-keys.js';
import { findAccountTask, insertTask, listAccountTasks } from '../../src/store/tasks.js';
import { insertUsage, listUsage, MS_PER_DAY, spendByDay, spendByModel } from '../../src/store/usage.js';
import { enqueueWebhook, listAccountWebhooks } from '../../src/store/webhook-outbox.js';
import { taskRow, usageRow } from '../helpers/account-rows.js';
import { type StoreUrls, storePerTest } from './store-context.js';

const DAY = 20_000; // 2024-10-04, as days since 1970-01-01
const T0 = DAY * MS_PER_DAY;

export function runAccountQueriesContract(label: string, makeUrl: StoreUrls): void {
  describe(`account queries on ${label}`, () => {
    const ctx = storePerTest(makeUrl);
    const db = () => ctx.store().db;
    const account = async () => (await createAccount(ctx.store(), { name: 'acct', now: 1 })).id;
    const ids = (rows: { id: string }[]) => rows.map((r) => r.id);

    test('usage filters narrow by model, endpoint, key and a time range that includes from and excludes to', async () => {
      const accountId = await account();
      const other = await account();
      await insertUsage(db(), usageRow(accountId, { id: 'use_a', createdAt: T0, model: 'm1', endpoint: 'chat.completions', keyId: 'key_1' }));
      await insertUsage(db(), usageRow(accountId, { id: 'use_b', createdAt: T0 + 1, model: 'm2', endpoint: 'chat.completions', keyId: 'key_2' }));
      await insertUsage(db(), usageRow(accountId, { id: 'use_c', createdAt: T0 + 2, model: 'm1', endpoint: 'messages', keyId: 'key_2' }));
      await insertUsage(db(), usageRow(other, { id: 'use_x', createdAt: T0 + 1, model: 'm1', keyId: 'key_1' }));
      const list = (filter: object) => listUsage(db(), { accountId, ...filter }).then(ids);
      assert.deepEqual(await list({}), ['use_c', 'use_b', 'use_a']);
      assert.deepEqual(await list({ model: 'm1' }), ['use_c', 'use_a']);
      assert.deepEqual(await list({ endpoint: 'messages' }), ['use_c']);
      assert.deepEqual(await list({ keyId: 'key_2' }), ['use_c', 'use_b']);
      assert.deepEqual(await list({ fromMs: T0 + 1, toMs: T0 + 2 }), ['use_b']);
    });

    test('usage pages newest first, rows of one millisecond ordered by id, each row once', async () => {
      const accountId = await account();
      for (const [id, at] of [
        ['use_1', T0],
        ['use_2', T0 + 5],
        ['use_3', T0 + 5],
        ['use_4', T0 + 5],
        ['use_5', T0 + 9],
      ] as const)
        await insertUsage(db(), usageRow(accountId, { id, createdAt: at }));
      const first = await listUsage(db(), { accountId, limit: 2 });
      const last = first.at(-1)!;
      const second = await listUsage(db(), { accountId, limit: 2, olderThan: { createdAt: last.created_at, id: last.id } });
      const end = second.at(-1)!;
      const third = await listUsage(db(), { accountId, limit: 2, olderThan: { createdAt: end.created_at, id: end.id } });
      assert.deepEqual([ids(first), ids(second), ids(third)], [['use_5', 'use_4'], ['use_3', 'use_2'], ['use_1']]);
    });

    test('usage rows waiting in usage_recent are listed, paged, filtered and summed with those in usage, each once', async () => {
      const accountId = await account();
      const other = await account();
      const recent = (row: ReturnType<typeof usageRow>) => db().insertInto('usage_recent').values(row).execute();
      await insertUsage(db(), usageRow(accountId, { id: 'use_1', createdAt: T0, amountMicros: 1 }));
      await recent(usageRow(accountId, { id: 'use_2', createdAt: T0 + 1, amountMicros: 2, model: 'm2' }));
      await insertUsage(db(), usageRow(accountId, { id: 'use_3', createdAt: T0 + 1, amountMicros: 4 }));
      await recent(usageRow(accountId, { id: 'use_4', createdAt: T0 + MS_PER_DAY, amountMicros: 8 }));
      await recent(usageRow(other, { id: 'use_x', createdAt: T0 + 1, amountMicros: 100 }));
      const first = await listUsage(db(), { accountId, limit: 3 });
      const last = first.at(-1)!;
      const rest = await listUsage(db(), { accountId, limit: 3, olderThan: { createdAt: last.created_at, id: last.id } });
      assert.deepEqual([ids(first), ids(rest)], [['use_4', 'use_3', 'use_2'], ['use_1']]);
      assert.deepEqual(ids(await listUsage(db(), { accountId, model: 'm2' })), ['use_2']);
      assert.deepEqual(await spendByDay(db(), { accountId }), [
        { group: DAY, requests: 3, amountMicros: 7 },
        { group: DAY + 1, requests: 1, amountMicros: 8 },
      ]);
      assert.deepEqual(await spendByModel(db(), { accountId, toMs: T0 + MS_PER_DAY }), [
        { group: 'm2', requests: 1, amountMicros: 2 },
        { group: 'sandbox-chat', requests: 2, amountMicros: 5 },
      ]);
    });

    test('spend sums requests and amounts per UTC day, a row at midnight counting for the new day', async () => {
      const accountId = await account();
      await insertUsage(db(), usageRow(accountId, { id: 'use_1', createdAt: T0 - 1, amountMicros: 7 }));
      await insertUsage(db(), usageRow(accountId, { id: 'use_2', createdAt: T0, amountMicros: 11 }));
      await insertUsage(db(), usageRow(accountId, { id: 'use_3', createdAt: T0 + MS_PER_DAY - 1, amountMicros: 2 ** 40 }));
      await insertUsage(db(), usageRow(accountId, { id: 'use_4', createdAt: T0 + MS_PER_DAY, amountMicros: 5 }));
      assert.deepEqual(await spendByDay(db(), { accountId }), [
        { group: DAY - 1, requests: 1, amountMicros: 7 },
        { group: DAY, requests: 2, amountMicros: 11 + 2 ** 40 },
        { group: DAY + 1, requests: 1, amountMicros: 5 },
      ]);
      assert.deepEqual(await spendByDay(db(), { accountId, fromMs: T0, toMs: T0 + MS_PER_DAY }), [{ group: DAY, requests: 2, amountMicros: 11 + 2 ** 40 }]);
    });

    test('spend sums per model, in order, for the account alone', async () => {
      const accountId = await account();
      const other = await account();
      await insertUsage(db(), usageRow(accountId, { id: 'use_1', createdAt: T0, model: 'beta', amountMicros: 3 }));
      await insertUsage(db(), usageRow(accountId, { id: 'use_2', createdAt: T0 + 1, model: 'alpha', amountMicros: 4 }));
      await insertUsage(db(), usageRow(accountId, { id: 'use_3', createdAt: T0 + 2, model: 'beta', amountMicros: 5 }));
      await insertUsage(db(), usageRow(other, { id: 'use_4', createdAt: T0, model: 'alpha', amountMicros: 100 }));
      assert.deepEqual(await spendByModel(db(), { accountId }), [
        { group: 'alpha', requests: 1, amountMicros: 4 },
        { group: 'beta', requests: 2, amountMicros: 8 },
      ]);
      assert.deepEqual(await spendByModel(db(), { accountId, model: 'none' }), []);
    });

    test("an account's keys are listed without their hash, each with its last recorded use, which never moves back", async () => {
      const accountId = await account();
      const other = await account();
      const { row: used } = await issueApiKey(ctx.store(), { accountId, name: 'used', now: 10 });
      const { row: idle } = await issueApiKey(ctx.store(), { accountId, name: 'idle', now: 20 });
      await issueApiKey(ctx.store(), { accountId: other, now: 30 });
      await recordKeyUses(db(), new Map([[used.id, T0 + 7]]));
      await recordKeyUses(db(), new Map([[used.id, T0]])); // an instance that noted an earlier use writes later
      const base = {
        account_id: accountId,
        rpm: null,
        revoked_at: null,
        allowed_models: null,
        daily_cap_micros: null,
        monthly_cap_micros: null,
        expires_at: null,
      };
      assert.deepEqual(await listAccountKeys(db(), { accountId }), [
        { ...base, id: idle.id, name: 'idle', prefix: idle.prefix, created_at: 20, last_used_at: null },
        { ...base, id: used.id, name: 'used', prefix: used.prefix, created_at: 10, last_used_at: T0 + 7 },
      ]);
      assert.deepEqual(ids(await listAccountKeys(db(), { accountId, keyId: idle.id })), [idle.id]);
    });

    test("revoking within an account leaves another account's key alone", async () => {
      const accountId = await account();
      const { row } = await issueApiKey(ctx.store(), { accountId: await account(), now: 1 });
      assert.equal(await revokeApiKey(db(), { keyId: row.id, accountId, now: 5 }), false);
      assert.equal(await revokeApiKey(db(), { keyId: row.id, accountId: row.account_id, now: 6 }), true);
      assert.equal((await listAccountKeys(db(), { accountId: row.account_id }))[0]!.revoked_at, 6);
    });

    test("tasks list newest first, by kind and status, paged, the account's only", async () => {
      const accountId = await account();
      const other = await account();
      await insertTask(db(), taskRow(accountId, { id: 'vid_1', createdAt: T0, kind: 'video', status: 'succeeded' }));
      await insertTask(db(), taskRow(accountId, { id: 'img_2', createdAt: T0 + 1, kind: 'image', status: 'failed' }));
      await insertTask(db(), taskRow(accountId, { id: 'vid_3', createdAt: T0 + 1, kind: 'video', status: 'queued' }));
      await insertTask(db(), taskRow(other, { id: 'vid_4', createdAt: T0 + 2 }));
      const list = (filter: object) => listAccountTasks(db(), { accountId, limit: 10, ...filter }).then(ids);
      assert.deepEqual(await list({}), ['vid_3', 'img_2', 'vid_1']);
      assert.deepEqual(await list({ kind: 'video' }), ['vid_3', 'vid_1']);
      assert.deepEqual(await list({ statuses: ['failed', 'succeeded'] }), ['img_2', 'vid_1']);
      assert.deepEqual(await list({ olderThan: { createdAt: T0 + 1, id: 'vid_3' } }), ['img_2', 'vid_1']);
      assert.deepEqual(await list({ limit: 1 }), ['vid_3']);
    });

    test('a task is found by id or upstream id across kinds, and not from another account', async () => {
      const accountId = await account();
      await insertTask(db(), taskRow(accountId, { id: 'img_1', createdAt: T0, kind: 'image' }));
      assert.equal((await findAccountTask(db(), { accountId, id: 'img_1' }))?.id, 'img_1');
      assert.equal((await findAccountTask(db(), { accountId, id: 'up_img_1' }))?.id, 'img_1');
      assert.equal(await findAccountTask(db(), { accountId: await account(), id: 'img_1' }), undefined);
    });

    test("webhook deliveries list newest first, by task, paged, the account's only", async () => {
      const accountId = await account();
      const other = await account();
      const enqueue = (account_: string, taskId: string, eventId: string, now: number) =>
        enqueueWebhook(db(), { accountId: account_, taskId, eventId, url: 'https://hooks.example/h', payload: '{}', now });
      const first = await enqueue(accountId, 'task_a', 'evt_1', T0);
      const second = await enqueue(accountId, 'task_b', 'evt_2', T0 + 1);
      await enqueue(other, 'task_a', 'evt_3', T0 + 2);
      const events = (rows: { event_id: string }[]) => rows.map((r) => r.event_id);
      assert.deepEqual(events(await listAccountWebhooks(db(), { accountId, limit: 10 })), ['evt_2', 'evt_1']);
      assert.deepEqual(events(await listAccountWebhooks(db(), { accountId, taskId: 'task_a', limit: 10 })), ['evt_1']);
      assert.deepEqual(await listAccountWebhooks(db(), { accountId, limit: 10, olderThan: { createdAt: second.created_at, id: second.id } }), [
        {
          id: first.id,
          task_id: 'task_a',
          event_id: 'evt_1',
          url: 'https://hooks.example/h',
          state: 'pending',
          attempts: 0,
          next_attempt_at: T0,
          last_status: null,
          last_error: null,
          created_at: T0,
          delivered_at: null,
        },
      ]);
    });
  });
}
