// The outbox queries, run on SQLite by outbox-sqlite.test.ts and on PostgreSQL by outbox-postgres.test.ts.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createAccount } from '../../src/billing/ledger.js';
import { openStore } from '../../src/store/open.js';
import {
  claimDueWebhooks, enqueueWebhook, findWebhook, listWebhooksForTask, recordDeliveryAttempt, type WebhookRow,
} from '../../src/store/webhook-outbox.js';
import { storePerTest } from '../store/store-context.js';

const T0 = 1_700_000_000_000;
const LEASE = 60_000;

export function runOutboxContract(label: string, makeUrl: () => string): void {
  describe(`webhook outbox on ${label}`, () => {
    const ctx = storePerTest(makeUrl);
    const db = () => ctx.store().db;
    const claim = (now: number, limit = 10) => claimDueWebhooks(db(), { now, leaseMs: LEASE, limit, dialect: ctx.store().dialect });
    const enqueue = async (n: number, { taskId = 'task_1', now = T0 } = {}): Promise<WebhookRow> => {
      const { id: accountId } = await createAccount(ctx.store(), { name: 'hooks', now: T0 });
      return enqueueWebhook(db(), {
        accountId, taskId, eventId: `evt_${n}`, url: `https://hooks.example/${n}`, payload: `{"n":${n}}`, now,
      });
    };
    const ids = (rows: WebhookRow[]) => rows.map((r) => r.event_id);

    test('an enqueued webhook is a pending row, due at once, found by id and by task', async () => {
      const row = await enqueue(1);
      const expected: WebhookRow = {
        id: row.id, account_id: row.account_id, task_id: 'task_1', event_id: 'evt_1', url: 'https://hooks.example/1',
        payload: '{"n":1}', state: 'pending', attempts: 0, next_attempt_at: T0, lease_until: null, last_status: null,
        last_error: null, created_at: T0, delivered_at: null,
      };
      assert.match(row.id, /^whk_/);
      assert.deepEqual(row, expected);
      assert.deepEqual(await findWebhook(db(), row.id), expected);
      assert.deepEqual(await listWebhooksForTask(db(), 'task_1'), [expected]);
      assert.deepEqual(await listWebhooksForTask(db(), 'task_other'), []);
      assert.equal(await findWebhook(db(), 'whk_missing'), undefined);
    });

    test('enqueued inside a transaction, the row exists only if that transaction commits', async () => {
      const { id: accountId } = await createAccount(ctx.store(), { name: 'hooks' });
      const values = { accountId, taskId: 'task_tx', url: 'https://hooks.example/', payload: '{}', now: T0 };
      await assert.rejects(
        db().transaction().execute(async (trx) => {
          await enqueueWebhook(trx, { ...values, eventId: 'evt_rolled_back' });
          throw new Error('the terminal state change failed');
        }),
        /terminal state change failed/,
      );
      await db().transaction().execute((trx) => enqueueWebhook(trx, { ...values, eventId: 'evt_committed' }));
      assert.deepEqual(ids(await listWebhooksForTask(db(), 'task_tx')), ['evt_committed']);
    });

    test('a claim takes due rows only, earliest first, up to the limit, and leases them', async () => {
      await enqueue(1, { now: T0 + 2 });
      await enqueue(2, { now: T0 });
      await enqueue(3, { now: T0 + 1 });
      await enqueue(4, { now: T0 + 10 }); // not yet due
      const claimed = await claim(T0 + 5, 2);
      assert.deepEqual(ids(claimed), ['evt_2', 'evt_3']);
      assert.deepEqual(claimed.map((r) => r.lease_until), [T0 + 5 + LEASE, T0 + 5 + LEASE]);
      assert.deepEqual(ids(await claim(T0 + 5)), ['evt_1']);
      assert.deepEqual(ids(await claim(T0 + 5)), []);
    });

    test('a leased row is not claimed again until its lease expires (a crashed deliverer)', async () => {
      await enqueue(1);
      assert.deepEqual(ids(await claim(T0)), ['evt_1']);
      assert.deepEqual(ids(await claim(T0 + LEASE - 1)), []);
      const reclaimed = await claim(T0 + LEASE);
      assert.deepEqual({ ids: ids(reclaimed), lease: reclaimed[0]?.lease_until }, { ids: ['evt_1'], lease: T0 + 2 * LEASE });
    });

    test('a retry returns the row to pending at its next attempt time, lease ended, outcome kept', async () => {
      const row = await enqueue(1);
      await claim(T0);
      const applied = await recordDeliveryAttempt(db(), {
        id: row.id, attempts: 1, outcome: 'retry', nextAttemptAt: T0 + 5_000, lastStatus: 500, lastError: 'receiver answered 500', now: T0 + 20,
      });
      assert.equal(applied, true);
      assert.deepEqual(await findWebhook(db(), row.id), {
        ...row, attempts: 1, next_attempt_at: T0 + 5_000, lease_until: null, last_status: 500, last_error: 'receiver answered 500',
      });
      assert.deepEqual(ids(await claim(T0 + 4_999)), []);
      assert.deepEqual(ids(await claim(T0 + 5_000)), ['evt_1']);
    });

    test('delivered and dropped rows are final: never claimed again', async () => {
      const delivered = await enqueue(1);
      const dropped = await enqueue(2);
      await claim(T0);
      await recordDeliveryAttempt(db(), { id: delivered.id, attempts: 1, outcome: 'delivered', lastStatus: 204, now: T0 + 30 });
      await recordDeliveryAttempt(db(), {
        id: dropped.id, attempts: 1, outcome: 'dropped', lastError: 'RequestTimeoutError: no complete answer within 10000 ms', now: T0 + 30,
      });
      assert.deepEqual(await findWebhook(db(), delivered.id), {
        ...delivered, state: 'delivered', attempts: 1, last_status: 204, delivered_at: T0 + 30,
      });
      assert.deepEqual(await findWebhook(db(), dropped.id), {
        ...dropped, state: 'dropped', attempts: 1, last_error: 'RequestTimeoutError: no complete answer within 10000 ms',
      });
      assert.deepEqual(ids(await claim(T0 + 10 * LEASE)), []);
    });

    test('an attempt recorded against a row that moved on changes nothing', async () => {
      const row = await enqueue(1);
      await claim(T0);
      assert.equal(await recordDeliveryAttempt(db(), { id: row.id, attempts: 1, outcome: 'retry', nextAttemptAt: T0 + 1, now: T0 }), true);
      const after = await findWebhook(db(), row.id);
      // a second deliverer that also made attempt 1 (its lease had expired) reports late
      assert.equal(await recordDeliveryAttempt(db(), { id: row.id, attempts: 1, outcome: 'delivered', lastStatus: 200, now: T0 + 2 }), false);
      assert.equal(await recordDeliveryAttempt(db(), { id: row.id, attempts: 3, outcome: 'dropped', now: T0 + 2 }), false);
      assert.equal(await recordDeliveryAttempt(db(), { id: 'whk_missing', attempts: 1, outcome: 'dropped', now: T0 + 2 }), false);
      assert.deepEqual(await findWebhook(db(), row.id), after);
    });

    test('a retry without a next attempt time is a programming error', async () => {
      await assert.rejects(
        recordDeliveryAttempt(db(), { id: 'whk_x', attempts: 1, outcome: 'retry', now: T0 }),
        /a retry needs nextAttemptAt/,
      );
    });

    test('claimers racing on two connections never get the same row, and together get them all', async () => {
      const rows: WebhookRow[] = [];
      for (let n = 0; n < 60; n++) rows.push(await enqueue(n));
      const other = await openStore(ctx.url());
      try {
        const claimers = [ctx.store(), other, ctx.store(), other, ctx.store(), other];
        const claimed = await Promise.all(claimers.map(async (store) => {
          const mine: string[] = [];
          for (;;) {
            const batch = await claimDueWebhooks(store.db, { now: T0, leaseMs: LEASE, limit: 4, dialect: store.dialect });
            if (batch.length === 0) return mine;
            mine.push(...batch.map((r) => r.id));
          }
        }));
        const all = claimed.flat();
        assert.equal(new Set(all).size, all.length, 'a row was claimed twice');
        assert.deepEqual(all.sort(), rows.map((r) => r.id).sort());
      } finally {
        await other.close();
      }
    });
  });
}
