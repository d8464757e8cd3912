// The SQLite hot ledger's own promises: steps asked for together commit together, a step that
// fails fails alone, a store fault fails the batch with nothing written, a step never lands inside
// a transaction someone else has open, and the sync mode comes from the store URL.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { sql } from 'kysely';
import { checkAccountBalance, createAccount, holdFunds, settleHold } from '../../src/billing/ledger.js';
import { findAccount } from '../../src/store/accounts.js';
import { findHold } from '../../src/store/holds.js';
import { openStore, type Store } from '../../src/store/open.js';

const dir = mkdtempSync(join(tmpdir(), 'tollroute-hot-ledger-'));
let n = 0;
after(() => rmSync(dir, { recursive: true, force: true }));
const freshStore = (query = '', options = {}) => openStore(`sqlite:${join(dir, `s${++n}.db`)}${query}`, options);

const holdOf = (accountId: string, amountMicros: number, requestId = 'req_1') =>
  ({ accountId, amountMicros, requestId, model: 'm', endpoint: 'chat' }) as const;

/** What the store logged, each warning as its message and fields. */
function recordingLog() {
  const warnings: { msg: string; obj: Record<string, unknown> }[] = [];
  return { warnings, log: { warn: (obj: object, msg: string) => warnings.push({ msg, obj: obj as Record<string, unknown> }) } };
}

async function withStore(run: (store: Store) => Promise<void>, query = '', log = recordingLog().log) {
  const store = await freshStore(query, { log });
  try {
    await run(store);
  } finally {
    await store.close();
  }
}

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

  test('a step that fails is undone alone, the rest of its batch commits, and the replay is logged', () => {
    const recorded = recordingLog();
    return withStore(
      async (store) => {
        const account = await createAccount(store, { name: 'a', creditMicros: 10_000 });
        const hold = await holdFunds(store, holdOf(account.id, 1_000));
        // A usage row with the id the settle will use already exists: its insert fails after the hold was closed.
        await sql`insert into usage (id, account_id, model, endpoint, units, amount_micros, created_at) values ('use_taken', ${account.id}, 'm', 'chat', '{}', 0, 0)`.execute(
          store.db,
        );
        const [failed, other] = await Promise.allSettled([
          store.hotLedger!.settle({ holdId: hold.holdId, chargeMicros: 100, units: '{}', requestId: null, flags: [], usageId: 'use_taken', now: 1 }),
          holdFunds(store, holdOf(account.id, 2_000, 'req_2')),
        ]);
        assert.equal(failed.status, 'rejected');
        assert.equal(other.status, 'fulfilled');
        assert.equal((await findHold(store.db, hold.holdId))?.state, 'open', 'the failed settle closed nothing');
        assert.deepEqual(await findAccount(store.db, account.id).then((a) => [a?.balance_micros, a?.held_micros]), [7_000, 3_000]);
        assert.equal((await checkAccountBalance(store, account.id)).consistent, true);
        assert.deepEqual(
          recorded.warnings.map((w) => [w.msg, w.obj.steps]),
          [['a batch of ledger steps failed; writing its steps one by one', 2]],
        );
      },
      '',
      recorded.log,
    );
  });

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
