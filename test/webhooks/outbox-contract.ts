// The outbox queries, run on SQLite by outbox-sqlite.test.ts and on PostgreSQL by outbox-postgres.test.ts.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createAccount } from '../../src/billing/accounts.js';
import { migrateToLatest } from '../../src/store/migrations.js';
import { openStore } from '../../src/store/open.js';
import {
  claimDueWebhooks,
  enqueueWebhook,
  findAccountWebhook,
  findWebhook,
  listWebhooksForTask,
  mayHaveDueWebhooks,
  rearmDroppedWebhook,
  recordDeliveryAttempt,
  type WebhookRow,
} from '../../src/store/webhook-outbox.js';
import { type StoreUrls, storePerTest } from '../store/store-context.js';

const T0 = 1_700_000_000_000;
const LEASE = 60_000;

export function runOutboxContract(label: string, makeUrl: StoreUrls): void {
  describe(`webhook outbox on ${label}`, () => {
    const ctx = storePerTest(makeUrl);
    const db = () => ctx.store().db;
    const claim = (now: number, limit = 10, perReceiver = 100) =>
      claimDueWebhooks(db(), { now, leaseMs: LEASE, limit, perReceiver, dialect: ctx.store().dialect });
    // One account per store unless a test names another: lanes are (account, receiver).
    const accounts = new WeakMap<object, Map<string, string>>();
    const accountNamed = async (name: string): Promise<string> => {
      const mine = accounts.get(ctx.store()) ?? new Map<string, string>();
      accounts.set(ctx.store(), mine);
      if (!mine.has(name)) mine.set(name, (await createAccount(ctx.store(), { name, now: T0 })).id);
      return mine.get(name)!;
    };
    const enqueue = async (n: number, { taskId = 'task_1', now = T0, url = `https://hooks.example/${n}`, account = 'hooks' } = {}): Promise<WebhookRow> => {
      const accountId = await accountNamed(account);
      return enqueueWebhook(db(), { accountId, taskId, eventId: `evt_${n}`, url, payload: `{"n":${n}}`, now });
    };
    const ids = (rows: WebhookRow[]) => rows.map((r) => r.event_id);

    test('an enqueued webhook is a pending row, due at once, found by id and by task', async () => {
      const row = await enqueue(1);
      const expected: WebhookRow = {
        id: row.id,
        account_id: row.account_id,
        task_id: 'task_1',
        event_id: 'evt_1',
        url: 'https://hooks.example/1',
        receiver: 'https://hooks.example',
        payload: '{"n":1}',
        state: 'pending',
        attempts: 0,
        next_attempt_at: T0,
        lease_until: null,
        last_status: null,
        last_error: null,
        created_at: T0,
        delivered_at: null,
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
        db()
          .transaction()
          .execute(async (trx) => {
            await enqueueWebhook(trx, { ...values, eventId: 'evt_rolled_back' });
            throw new Error('the terminal state change failed');
          }),
        /terminal state change failed/,
      );
      await db()
        .transaction()
        .execute((trx) => enqueueWebhook(trx, { ...values, eventId: 'evt_committed' }));
      assert.deepEqual(ids(await listWebhooksForTask(db(), 'task_tx')), ['evt_committed']);
    });

    test('a claim takes due rows only, earliest first, up to the limit, and leases them', async () => {
      await enqueue(1, { now: T0 + 2 });
      await enqueue(2, { now: T0 });
      await enqueue(3, { now: T0 + 1 });
      await enqueue(4, { now: T0 + 10 }); // not yet due
      const claimed = await claim(T0 + 5, 2);
      assert.deepEqual(ids(claimed), ['evt_2', 'evt_3']);
      assert.deepEqual(
        claimed.map((r) => r.lease_until),
        [T0 + 5 + LEASE, T0 + 5 + LEASE],
      );
      assert.deepEqual(ids(await claim(T0 + 5)), ['evt_1']);
      assert.deepEqual(ids(await claim(T0 + 5)), []);
    });

    test("a webhook's receiver is its URL's origin: path, query and default port do not matter", async () => {
      const rows = await Promise.all([
        enqueue(1, { url: 'https://Hooks.Example:443/a?token=1' }),
        enqueue(2, { url: 'https://hooks.example/b' }),
        enqueue(3, { url: 'https://hooks.example:8443/a' }),
        enqueue(4, { url: 'http://hooks.example/a' }),
      ]);
      assert.deepEqual(
        rows.map((r) => r.receiver),
        ['https://hooks.example', 'https://hooks.example', 'https://hooks.example:8443', 'http://hooks.example'],
      );
    });

    test('a claim leases at most perReceiver rows of one receiver, counting those in flight; its backlog stays unleased', async () => {
      const tarpit = (n: number) => enqueue(n, { url: `https://tarpit.example/${n}`, now: T0 + n });
      for (let n = 1; n <= 5; n++) await tarpit(n);
      await enqueue(6, { url: 'https://good.example/hook', now: T0 + 10 });
      assert.deepEqual(ids(await claim(T0 + 20, 10, 2)), ['evt_1', 'evt_2', 'evt_6']);
      const leases = (await listWebhooksForTask(db(), 'task_1')).map((r) => [r.event_id, r.lease_until]);
      assert.deepEqual(leases, [
        ['evt_1', T0 + 20 + LEASE],
        ['evt_2', T0 + 20 + LEASE],
        ['evt_3', null],
        ['evt_4', null],
        ['evt_5', null],
        ['evt_6', T0 + 20 + LEASE],
      ]);
      await enqueue(7, { url: 'https://good.example/hook', now: T0 + 11 });
      // the tarpit's two slots are taken: only the good receiver's new row is claimed
      assert.deepEqual(ids(await claim(T0 + 20, 10, 2)), ['evt_7']);
      const first = (await listWebhooksForTask(db(), 'task_1'))[0]!;
      await recordDeliveryAttempt(db(), { id: first.id, attempts: 1, outcome: 'retry', nextAttemptAt: T0 + 5_000, now: T0 + 30 });
      // one slot free again: the tarpit's next row in due order, not the retry (due later)
      assert.deepEqual(ids(await claim(T0 + 40, 10, 2)), ['evt_3']);
      assert.deepEqual(ids(await claim(T0 + 40, 10, 2)), []);
    });

    test("one account's rows in flight to a receiver take none of another account's slots to the same receiver", async () => {
      for (let n = 1; n <= 4; n++) await enqueue(n, { url: `https://platform.example/${n}`, now: T0 + n, account: 'slow' });
      await enqueue(5, { url: 'https://platform.example/b', now: T0 + 10, account: 'prompt' });
      assert.deepEqual(ids(await claim(T0 + 20, 10, 2)), ['evt_1', 'evt_2', 'evt_5']);
      await enqueue(6, { url: 'https://platform.example/b', now: T0 + 11, account: 'prompt' });
      // the slow account's two slots are taken and its backlog waits; the other account's lane has room
      assert.deepEqual(ids(await claim(T0 + 20, 10, 2)), ['evt_6']);
      assert.deepEqual(ids(await claim(T0 + 20, 10, 2)), []);
    });

    test("an expired lease (a crashed deliverer) no longer fills its receiver's slot", async () => {
      for (let n = 1; n <= 3; n++) await enqueue(n, { url: `https://tarpit.example/${n}`, now: T0 + n });
      assert.deepEqual(ids(await claim(T0 + 10, 10, 2)), ['evt_1', 'evt_2']);
      assert.deepEqual(ids(await claim(T0 + 10 + LEASE - 1, 10, 2)), []);
      assert.deepEqual(ids(await claim(T0 + 10 + LEASE, 10, 2)), ['evt_1', 'evt_2']);
    });

    test("when the limit binds, a receiver with nothing in flight goes before another's further rows", async () => {
      for (let n = 1; n <= 4; n++) await enqueue(n, { url: `https://busy.example/${n}`, now: T0 + n });
      await enqueue(5, { url: 'https://quiet.example/hook', now: T0 + 10 });
      assert.deepEqual(ids(await claim(T0 + 20, 1, 4)), ['evt_1']);
      // busy.example has one in flight; quiet.example's row fills a first slot, busy.example's a second
      assert.deepEqual(ids(await claim(T0 + 20, 1, 4)), ['evt_5']);
      assert.deepEqual(ids(await claim(T0 + 20, 10, 4)), ['evt_2', 'evt_3', 'evt_4']);
    });

    test('a claim could take a row only when a pending one is due: the poll asks first, leases aside', async () => {
      const mayHave = (now: number) => mayHaveDueWebhooks(db(), now);
      assert.equal(await mayHave(T0), false, 'an empty outbox');
      const row = await enqueue(1, { now: T0 + 10 });
      assert.deepEqual([await mayHave(T0 + 9), await mayHave(T0 + 10)], [false, true]);
      assert.deepEqual(ids(await claim(T0 + 10)), ['evt_1']);
      // Leased, still pending and due: the next poll still runs its claim, which takes nothing.
      assert.equal(await mayHave(T0 + 11), true);
      await recordDeliveryAttempt(db(), { id: row.id, attempts: 1, outcome: 'delivered', lastStatus: 204, now: T0 + 12 });
      assert.equal(await mayHave(T0 + 20), false, 'a delivered row is final');
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
        id: row.id,
        attempts: 1,
        outcome: 'retry',
        nextAttemptAt: T0 + 5_000,
        lastStatus: 500,
        lastError: 'receiver answered 500',
        now: T0 + 20,
      });
      assert.equal(applied, true);
      assert.deepEqual(await findWebhook(db(), row.id), {
        ...row,
        attempts: 1,
        next_attempt_at: T0 + 5_000,
        lease_until: null,
        last_status: 500,
        last_error: 'receiver answered 500',
      });
      assert.deepEqual(ids(await claim(T0 + 4_999)), []);
      assert.deepEqual(ids(await claim(T0 + 5_000)), ['evt_1']);
    });

    test('delivered and dropped rows are final: never claimed again (unless a dropped one is re-armed)', async () => {
      const delivered = await enqueue(1);
      const dropped = await enqueue(2);
      await claim(T0);
      await recordDeliveryAttempt(db(), { id: delivered.id, attempts: 1, outcome: 'delivered', lastStatus: 204, now: T0 + 30 });
      await recordDeliveryAttempt(db(), {
        id: dropped.id,
        attempts: 1,
        outcome: 'dropped',
        lastError: 'RequestTimeoutError: no complete answer within 10000 ms',
        now: T0 + 30,
      });
      assert.deepEqual(await findWebhook(db(), delivered.id), {
        ...delivered,
        state: 'delivered',
        attempts: 1,
        last_status: 204,
        delivered_at: T0 + 30,
      });
      assert.deepEqual(await findWebhook(db(), dropped.id), {
        ...dropped,
        state: 'dropped',
        attempts: 1,
        last_error: 'RequestTimeoutError: no complete answer within 10000 ms',
      });
      assert.deepEqual(ids(await claim(T0 + 10 * LEASE)), []);
    });

    test('a dropped row re-armed by its account is pending and due now with a fresh attempt budget, same id and event id, claimed once', async () => {
      const row = await enqueue(1);
      await claim(T0);
      assert.equal(await recordDeliveryAttempt(db(), { id: row.id, attempts: 1, outcome: 'dropped', lastStatus: 503, now: T0 + 10 }), true);
      // as after a whole schedule: the contract is about the row, not the schedule
      await db().updateTable('webhook_outbox').set({ attempts: 4 }).where('id', '=', row.id).execute();
      assert.equal(await rearmDroppedWebhook(db(), { id: row.id, accountId: 'acct_other', now: T0 + 100 }), undefined, "another account's row");
      assert.equal((await findWebhook(db(), row.id))?.state, 'dropped');

      const rearmed = await rearmDroppedWebhook(db(), { id: row.id, accountId: row.account_id, now: T0 + 100 });
      assert.deepEqual(rearmed, await findAccountWebhook(db(), { id: row.id, accountId: row.account_id }));
      assert.deepEqual(await findWebhook(db(), row.id), {
        ...row,
        state: 'pending',
        attempts: 0,
        next_attempt_at: T0 + 100,
        lease_until: null,
        last_status: null,
        last_error: null,
      });
      assert.equal(await rearmDroppedWebhook(db(), { id: row.id, accountId: row.account_id, now: T0 + 101 }), undefined, 'pending: not re-armed twice');
      assert.deepEqual(ids(await claim(T0 + 100)), ['evt_1']);
      assert.deepEqual(ids(await claim(T0 + 101)), [], 'under its lease, one attempt at a time');
      assert.equal(await recordDeliveryAttempt(db(), { id: row.id, attempts: 1, outcome: 'delivered', lastStatus: 200, now: T0 + 120 }), true);
      assert.equal(await rearmDroppedWebhook(db(), { id: row.id, accountId: row.account_id, now: T0 + 200 }), undefined, 'delivered: final');
      assert.equal(await findAccountWebhook(db(), { id: row.id, accountId: 'acct_other' }), undefined);
    });

    test('two re-arms of one dropped row racing on two connections re-arm it once', async () => {
      const row = await enqueue(1);
      await claim(T0);
      assert.equal(await recordDeliveryAttempt(db(), { id: row.id, attempts: 1, outcome: 'dropped', now: T0 + 10 }), true);
      const other = await openStore(ctx.url());
      try {
        const results = await Promise.all(
          [ctx.store(), other, ctx.store(), other].map((store) => rearmDroppedWebhook(store.db, { id: row.id, accountId: row.account_id, now: T0 + 100 })),
        );
        assert.equal(results.filter((r) => r !== undefined).length, 1);
      } finally {
        await other.close();
      }
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
      await assert.rejects(recordDeliveryAttempt(db(), { id: 'whk_x', attempts: 1, outcome: 'retry', now: T0 }), /a retry needs nextAttemptAt/);
    });

    test('rows pending before the receivers migration get their receiver from their URL; final rows keep none', async () => {
      const pending = await enqueue(1, { url: 'https://late.example:8443/hook?token=x' });
      const delivered = await enqueue(2);
      await recordDeliveryAttempt(db(), { id: delivered.id, attempts: 1, outcome: 'delivered', lastStatus: 200, now: T0 + 1 });
      // back to the schema before 005_webhook_receivers, then forward again
      await db().schema.dropIndex('webhook_outbox_state_receiver').execute();
      await db().schema.alterTable('webhook_outbox').dropColumn('receiver').execute();
      await db()
        .deleteFrom('kysely_migration' as never)
        .where('name' as never, '=', '005_webhook_receivers' as never)
        .execute();
      await migrateToLatest(db(), ctx.store().dialect);
      assert.deepEqual([(await findWebhook(db(), pending.id))?.receiver, (await findWebhook(db(), delivered.id))?.receiver], ['https://late.example:8443', '']);
    });

    test('claimers racing on two connections never get the same row, and together get them all', async () => {
      const rows: WebhookRow[] = [];
      for (let n = 0; n < 60; n++) rows.push(await enqueue(n));
      const other = await openStore(ctx.url());
      try {
        const claimers = [ctx.store(), other, ctx.store(), other, ctx.store(), other];
        const claimed = await Promise.all(
          claimers.map(async (store) => {
            const mine: string[] = [];
            for (;;) {
              const batch = await claimDueWebhooks(store.db, { now: T0, leaseMs: LEASE, limit: 4, perReceiver: 100, dialect: store.dialect });
              if (batch.length === 0) return mine;
              mine.push(...batch.map((r) => r.id));
            }
          }),
        );
        const all = claimed.flat();
        assert.equal(new Set(all).size, all.length, 'a row was claimed twice');
        assert.deepEqual(all.sort(), rows.map((r) => r.id).sort());
      } finally {
        await other.close();
      }
    });
  });
}
