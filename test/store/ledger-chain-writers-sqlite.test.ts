// Migration 030: on SQLite no trigger keeps the ledger's account chain; each writer does, in the
// transaction that writes the row (store/ledger-chain.ts). The chain must still find exactly the rows a
// scan of the ledger finds, whoever wrote them, in whatever order, and whatever was undone.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type Kysely, sql } from 'kysely';
import { checkAccountBalance, createAccount, creditAccount } from '../../src/billing/accounts.js';
import { settleReleasedHold } from '../../src/billing/late-settle.js';
import { holdFunds, holdFundsIn, releaseHold, releaseHoldIn, settleHold, settleHoldIn } from '../../src/billing/ledger.js';
import { insertLedgerRow, listLedger } from '../../src/store/ledger-rows.js';
import { openStore, type Store } from '../../src/store/open.js';
import type { DB } from '../../src/store/schema.js';
import { freshStore, holdOf, storeFile, withStore } from './hot-ledger-sqlite-fixture.js';
import { dropTempObjects, indexesAndTriggers } from './sqlite-schema.js';

/** The ids of an account's rows as the chain lists them and as a scan of the whole ledger finds them, newest first. */
async function chainAndScan(store: Store, accountId: string) {
  const { rows } = await sql<{ id: number }>`select id from ledger where account_id = ${accountId} order by id desc`.execute(store.db);
  const listed = await listLedger(store, { accountId, limit: 10_000 });
  return { chain: listed.map((row) => row.id), scan: rows.map((row) => row.id) };
}

async function assertChained(store: Store, accountId: string, rowCount: number) {
  const { chain, scan } = await chainAndScan(store, accountId);
  assert.equal(scan.length, rowCount);
  assert.deepEqual(chain, scan);
  assert.equal((await checkAccountBalance(store, accountId)).consistent, true);
}

test('a migrated SQLite store has no trigger on the ledger', () =>
  withStore(async (store) => {
    assert.deepEqual(
      (await indexesAndTriggers(store.db, 'ledger')).filter((statement) => /trigger/i.test(statement)),
      [],
    );
  }));

test('the transaction steps, the late settle and a credit chain the rows they write', () =>
  withStore(async (store) => {
    const { id } = await createAccount(store, { name: 'a', creditMicros: 1_000_000 });
    const inTransaction = <T>(step: (trx: Kysely<DB>) => Promise<T>) => store.db.transaction().execute(step);
    for (let i = 0; i < 3; i++) {
      const settled = await inTransaction((trx) => holdFundsIn(trx, holdOf(id, 1_000, `req_s${i}`)));
      // An instance's hold, as the recovery sweep releases it, which the late settle then charges.
      const released = await inTransaction((trx) => holdFundsIn(trx, { ...holdOf(id, 700, `req_r${i}`), instanceId: 'gw-1' }));
      await inTransaction((trx) => settleHoldIn(trx, settled.holdId, { chargeMicros: 300 + i, units: { output_token: 1 } }));
      await inTransaction((trx) => releaseHoldIn(trx, released.holdId));
      const late = await settleReleasedHold(store, released.holdId, { chargeMicros: 200, units: { output_token: 1 } });
      assert.equal(late.applied, true);
      await creditAccount(store, { accountId: id, amountMicros: 5 });
    }
    await assertChained(store, id, 1 + 3 * 6);
  }));

test('a row inserted outside a transaction joins the chain in a transaction of its own', () =>
  withStore(async (store) => {
    const { id } = await createAccount(store, { name: 'b', creditMicros: 10 });
    const first = await insertLedgerRow(store.db, { account_id: id, kind: 'credit', balance_delta_micros: 0, held_delta_micros: 0, created_at: 1 });
    const second = await insertLedgerRow(store.db, { account_id: id, kind: 'credit', balance_delta_micros: 0, held_delta_micros: 0, created_at: 2 });
    const { rows } = await sql<{
      id: number;
      prev_id: number | null;
    }>`select id, prev_id from ledger where id in (${first.id}, ${second.id}) order by id`.execute(store.db);
    assert.equal(rows[1]?.prev_id, first.id);
    await assertChained(store, id, 3);
  }));

test('a transaction undone after its ledger row leaves the chain as it was', () =>
  withStore(async (store) => {
    const { id } = await createAccount(store, { name: 'c', creditMicros: 1_000 });
    const undone = new Error('undone after the row');
    await assert.rejects(
      store.db.transaction().execute(async (trx) => {
        await holdFundsIn(trx, holdOf(id, 100, 'req_undone'));
        throw undone;
      }),
      (error) => error === undone,
    );
    await holdFunds(store, holdOf(id, 200, 'req_kept'));
    await assertChained(store, id, 2);
  }));

test('hot steps and transactions racing on one account keep one chain', () =>
  withStore(async (store) => {
    const { id } = await createAccount(store, { name: 'd', creditMicros: 100_000_000 });
    const racing = Array.from({ length: 40 }, async (_, i) => {
      const hot = await holdFunds(store, holdOf(id, 1_000, `req_h${i}`));
      const cold = await store.db.transaction().execute((trx) => holdFundsIn(trx, holdOf(id, 500, `req_c${i}`)));
      await Promise.all([
        settleHold(store, hot.holdId, { chargeMicros: 100, units: { output_token: 1 } }),
        releaseHold(store, cold.holdId),
        creditAccount(store, { accountId: id, amountMicros: 1 }),
      ]);
    });
    await Promise.all(racing);
    await assertChained(store, id, 1 + 40 * 5);
  }));

test('a store that had the trigger migrates to none, and its rows old and new stay chained', async () => {
  const old = await freshStore();
  const file = storeFile();
  const { id } = await createAccount(old, { name: 'e', creditMicros: 1_000 });
  // Back to migration 029's schema, as a gateway of that version left it, with a row its trigger chained.
  await dropTempObjects(old.db);
  await sql`
    create trigger ledger_account_chain after insert on ledger when new.prev_id is null begin
      update ledger set prev_id = (select last_ledger_id from accounts where id = new.account_id) where id = new.id;
      update accounts set last_ledger_id = new.id where id = new.account_id;
    end`.execute(old.db);
  await sql`delete from kysely_migration where name = '030_sqlite_chain_by_writers'`.execute(old.db);
  await sql`insert into ledger (account_id, kind, balance_delta_micros, held_delta_micros, created_at) values (${id}, 'adjust', 0, 0, 1)`.execute(old.db);
  await old.close();

  const migrated = await openStore(`sqlite:${file}`);
  try {
    assert.equal((await indexesAndTriggers(migrated.db, 'ledger')).filter((statement) => /trigger/i.test(statement)).length, 0);
    await creditAccount(migrated, { accountId: id, amountMicros: 3 });
    await holdFunds(migrated, holdOf(id, 100, 'req_after'));
    await assertChained(migrated, id, 4);
  } finally {
    await migrated.close();
  }
});
