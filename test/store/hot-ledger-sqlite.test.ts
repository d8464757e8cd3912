// The SQLite hot ledger's own promises: steps asked for together commit together, a step that
// fails fails alone, a store fault fails the batch with nothing written, a step never lands inside
// a transaction someone else has open, and the sync mode comes from the store URL.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'kysely';
import { checkAccountBalance, createAccount } from '../../src/billing/accounts.js';
import { holdFunds, settleHold } from '../../src/billing/ledger.js';
import { findAccount } from '../../src/store/accounts.js';
import { findHold } from '../../src/store/holds.js';
import type { Store } from '../../src/store/open.js';
import {
  balanceAndHeld,
  freshStore,
  holdOf,
  hotHold,
  otherConnectionBalance,
  settleOf,
  storeFile,
  withFailingSettle,
  withStore,
  writeLockTakenBy,
} from './hot-ledger-sqlite-fixture.js';

/** A hold step asked for alone: it runs at once, in a transaction the next batch joins and commits. */
const holdAtOnce = (store: Store, accountId: string, holdId: string, amountMicros: number) => store.hotLedger!.hold(hotHold(accountId, holdId, amountMicros));

describe('SQLite hot ledger', () => {
  test('holds and settles asked for at once all land, and the ledger matches the balance', () =>
    withStore(async (store) => {
      const account = await createAccount(store, { name: 'a', creditMicros: 1_000_000 });
      const holds = await Promise.all(Array.from({ length: 40 }, (_, i) => holdFunds(store, holdOf(account.id, 1_000, `req_${i}`))));
      await Promise.all(holds.map((hold) => settleHold(store, hold.holdId, { chargeMicros: 600, units: { output_token: 3 } })));
      const check = await checkAccountBalance(store, account.id);
      assert.deepEqual(
        { ...check },
        { balanceMicros: 1_000_000 - 40 * 600, heldMicros: 0, ledgerBalanceMicros: 1_000_000 - 40 * 600, ledgerHeldMicros: 0, consistent: true },
      );
    }));

  test('a hold the balance cannot cover is refused without failing the others in its batch', () =>
    withStore(async (store) => {
      const account = await createAccount(store, { name: 'a', creditMicros: 2_500 });
      const outcomes = await Promise.allSettled([1_000, 1_000, 1_000].map((amount, i) => holdFunds(store, holdOf(account.id, amount, `req_${i}`))));
      assert.deepEqual(
        outcomes.map((o) => o.status),
        ['fulfilled', 'fulfilled', 'rejected'],
      );
      assert.equal((await findAccount(store.db, account.id))?.balance_micros, 500);
    }));

  test('a step that fails is undone alone, and the rest of its batch commits', () =>
    withFailingSettle(async ({ store, accountId, holdId, settle }) => {
      const [failed, other] = await Promise.allSettled([settle(), holdFunds(store, holdOf(accountId, 2_000, 'req_2'))]);
      assert.equal(failed.status, 'rejected');
      assert.equal(other.status, 'fulfilled');
      assert.equal((await findHold(store.db, holdId))?.state, 'open', 'the failed settle closed nothing');
      assert.deepEqual(await balanceAndHeld(store, accountId), [7_000, 3_000]);
      assert.equal((await checkAccountBalance(store, accountId)).consistent, true);
    }));

  test("steps queued behind a transaction of Kysely's are replayed one by one when one fails, and the replay is logged", () =>
    withFailingSettle(async ({ store, accountId, settle, warnings }) => {
      let steps: Promise<PromiseSettledResult<unknown>[]> | undefined;
      await store.db.transaction().execute(async (trx) => {
        await sql`select 1`.execute(trx);
        // Both wait for this transaction, then go out in one batch of their own.
        steps = Promise.allSettled([settle(), holdFunds(store, holdOf(accountId, 2_000, 'req_2'))]);
      });
      assert.deepEqual(
        (await steps!).map((o) => o.status),
        ['rejected', 'fulfilled'],
      );
      assert.deepEqual(await balanceAndHeld(store, accountId), [7_000, 3_000]);
      assert.deepEqual(
        warnings.map((w) => [w.msg, w.obj.steps]),
        [['a batch of ledger steps failed; writing its steps one by one', 2]],
      );
    }));

  test('a hold step asked for alone runs at once, holding the write lock until its commit a turn later', () =>
    withStore(async (store) => {
      const account = await createAccount(store, { name: 'a', creditMicros: 10_000 });
      const held = holdAtOnce(store, account.id, 'hold_a', 4_000);
      assert.equal(writeLockTakenBy(storeFile()), true, 'the statements have run: the write lock is taken');
      assert.equal(otherConnectionBalance(account.id), 10_000, 'not committed yet');
      assert.equal(await held, true);
      assert.equal(otherConnectionBalance(account.id), 6_000);
    }));

  test('a settle of the only hold in flight commits before its promise is even returned', () =>
    withStore(async (store) => {
      const account = await createAccount(store, { name: 'a', creditMicros: 10_000 });
      const { holdId } = await holdFunds(store, holdOf(account.id, 4_000));
      const settled = store.hotLedger!.settle({ ...settleOf(holdId), usageId: 'use_1' });
      assert.equal(otherConnectionBalance(account.id), 9_900);
      assert.equal((await settled).kind, 'applied');
    }));

  test('a settle while another hold is in flight waits for its batch, which a step of that call may still join', () =>
    withStore(async (store) => {
      const account = await createAccount(store, { name: 'a', creditMicros: 10_000 });
      const { holdId } = await holdFunds(store, holdOf(account.id, 4_000));
      await holdFunds(store, holdOf(account.id, 1_000, 'req_2'));
      const settled = store.hotLedger!.settle({ ...settleOf(holdId), usageId: 'use_1' });
      assert.equal(otherConnectionBalance(account.id), 5_000, 'not committed yet');
      assert.equal((await settled).kind, 'applied');
      assert.equal(otherConnectionBalance(account.id), 8_900);
    }));

  test('a settle asked for alone commits in the first check phase: no turn is added before its answer', () =>
    withStore(async (store) => {
      const account = await createAccount(store, { name: 'a', creditMicros: 10_000 });
      const { holdId } = await holdFunds(store, holdOf(account.id, 4_000));
      const settled = store.hotLedger!.settle({ ...settleOf(holdId), usageId: 'use_1' });
      const seenNextImmediate = await new Promise((resolve) => setImmediate(() => resolve(otherConnectionBalance(account.id))));
      assert.equal(seenNextImmediate, 9_900);
      assert.equal((await settled).kind, 'applied');
    }));

  test('a step asked for while another is pending joins its batch, which sees the first step and commits both', () =>
    withStore(async (store) => {
      const account = await createAccount(store, { name: 'a', creditMicros: 10_000 });
      const first = holdAtOnce(store, account.id, 'hold_a', 4_000);
      const refused = store.hotLedger!.hold(hotHold(account.id, 'hold_c', 7_000));
      const held = store.hotLedger!.hold(hotHold(account.id, 'hold_d', 6_000));
      assert.deepEqual(await Promise.all([first, refused, held]), [true, false, true]);
      assert.equal(otherConnectionBalance(account.id), 0);
      assert.equal(await findHold(store.db, 'hold_c'), undefined);
    }));

  test("a statement of Kysely's commits the open transaction before it runs", () =>
    withStore(async (store) => {
      const account = await createAccount(store, { name: 'a', creditMicros: 10_000 });
      const first = holdAtOnce(store, account.id, 'hold_a', 4_000);
      let committed = false;
      void first.then(() => (committed = true));
      // Inside a transaction of Kysely's, where a hold can no longer be decided at once.
      await store.db.transaction().execute(async (trx) => {
        assert.equal(otherConnectionBalance(account.id), 6_000, 'committed before Kysely began');
        assert.equal(store.hotLedger!.holdAtOnce!(hotHold(account.id, 'hold_b', 1_000)), undefined);
        await sql`select 1`.execute(trx);
      });
      assert.equal(committed, true);
    }));

  test("a batch commits while a query of Kysely's holds the connection outside any transaction", () =>
    withStore(async (store) => {
      const account = await createAccount(store, { name: 'a', creditMicros: 10_000 });
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      // Kysely's connection lock taken between two of its awaits, with no transaction open.
      const holding = store.db.connection().execute(() => released);
      let timer: NodeJS.Timeout | undefined;
      try {
        const first = holdAtOnce(store, account.id, 'hold_a', 4_000);
        const joined = store.hotLedger!.hold(hotHold(account.id, 'hold_b', 1_000)); // a batch of its own, joining hold_a's transaction
        const timedOut = new Promise((resolve) => (timer = setTimeout(() => resolve('waited for the lock'), 2_000)));
        assert.deepEqual(await Promise.race([Promise.all([first, joined]), timedOut]), [true, true]);
        assert.equal(otherConnectionBalance(account.id), 5_000);
      } finally {
        clearTimeout(timer);
        release();
        await holding;
      }
    }));

  test('a batch that fails inside the transaction of a step run at once is undone alone; that step still commits', () =>
    withFailingSettle(async ({ store, accountId, holdId, settle, warnings }) => {
      const first = holdAtOnce(store, accountId, 'hold_a', 2_000);
      const outcomes = await Promise.allSettled([first, settle(), holdFunds(store, holdOf(accountId, 3_000, 'req_3'))]);
      assert.deepEqual(
        outcomes.map((o) => o.status),
        ['fulfilled', 'rejected', 'fulfilled'],
      );
      assert.deepEqual(await balanceAndHeld(store, accountId), [4_000, 6_000]);
      assert.equal((await findHold(store.db, holdId))?.state, 'open', 'the failed settle closed nothing');
      assert.equal((await checkAccountBalance(store, accountId)).consistent, true);
      assert.deepEqual(
        warnings.map((w) => [w.msg, w.obj.steps]),
        [['a batch of ledger steps failed; writing its steps one by one', 2]],
      );
    }));

  test('a commit that fails rejects every step run in its transaction, and none of them is written', () =>
    withStore(async (store) => {
      const account = await createAccount(store, { name: 'a', creditMicros: 10_000 });
      const first = holdAtOnce(store, account.id, 'hold_a', 1_000);
      const second = store.hotLedger!.hold(hotHold(account.id, 'hold_b', 1_000)); // joins the first's transaction
      store.failWrites!('SQLITE_FULL'); // the disk fills between the steps and their commit
      const outcomes = await Promise.allSettled([first, second]);
      store.failWrites!(null);
      assert.deepEqual(
        outcomes.map((o) => (o.status === 'rejected' ? (o.reason as { code?: string }).code : 'written')),
        ['SQLITE_FULL', 'SQLITE_FULL'],
      );
      assert.deepEqual(await balanceAndHeld(store, account.id), [10_000, 0]);
      assert.equal(await findHold(store.db, 'hold_a'), undefined);
      assert.equal((await checkAccountBalance(store, account.id)).consistent, true);
    }));

  test('a store that refuses writes fails every step of the batch and writes nothing', () =>
    withStore(async (store) => {
      const account = await createAccount(store, { name: 'a', creditMicros: 10_000 });
      store.failWrites!('SQLITE_FULL');
      const outcomes = await Promise.allSettled([holdFunds(store, holdOf(account.id, 1_000)), holdFunds(store, holdOf(account.id, 1_000, 'req_2'))]);
      store.failWrites!(null);
      assert.deepEqual(
        outcomes.map((o) => (o.status === 'rejected' ? (o.reason as { code?: string }).code : 'held')),
        ['SQLITE_FULL', 'SQLITE_FULL'],
      );
      assert.equal((await findAccount(store.db, account.id))?.balance_micros, 10_000);
    }));

  test('a hold asked for while another transaction is open lands after it, and survives its rollback', () =>
    withStore(async (store) => {
      const account = await createAccount(store, { name: 'a', creditMicros: 10_000 });
      let holding: Promise<unknown> | undefined;
      await assert.rejects(
        store.db.transaction().execute(async (trx) => {
          await sql`update accounts set name = 'renamed' where id = ${account.id}`.execute(trx);
          holding = holdFunds(store, holdOf(account.id, 1_000));
          await new Promise((resolve) => setTimeout(resolve, 20)); // the hold's batch is due meanwhile
          throw new Error('roll back');
        }),
        /roll back/,
      );
      await holding;
      const after = await findAccount(store.db, account.id);
      assert.deepEqual([after?.name, after?.balance_micros, after?.held_micros], ['a', 9_000, 1_000]);
    }));

  test('the store URL chooses SQLite sync mode, normal by default', async () => {
    await withStore(async (store) => {
      assert.deepEqual((await sql<{ synchronous: number }>`pragma synchronous`.execute(store.db)).rows, [{ synchronous: 1 }]);
    });
    await withStore(async (store) => {
      assert.deepEqual((await sql<{ synchronous: number }>`pragma synchronous`.execute(store.db)).rows, [{ synchronous: 2 }]);
    }, '?synchronous=full');
    await assert.rejects(freshStore('?synchronous=sometimes'), /synchronous must be normal, full or extra/);
  });
});
