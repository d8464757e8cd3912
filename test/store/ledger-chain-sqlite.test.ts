// On SQLite an account's ledger rows are found by their chain (store/ledger-chain.ts), not by an
// index by account: whatever writes a row, the chain must find exactly the rows a scan of the whole
// ledger finds, and a store made before the chain must get its rows chained.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { checkAccountBalance, createAccount, creditAccount } from '../../src/billing/accounts.js';
import { holdFunds, holdFundsIn, releaseHold, settleHold } from '../../src/billing/ledger.js';
import { listLedger, sumLedger } from '../../src/store/ledger-rows.js';
import { openStore, type Store } from '../../src/store/open.js';
import { plansOf } from './query-plans.js';
import { dropTempObjects } from './sqlite-schema.js';

const call = { model: 'chat-small', endpoint: '/v1/chat/completions' };
let dir: string;
before(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'tollroute-ledger-chain-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** An account's rows as a scan of the whole ledger finds them, newest first. */
async function scanned(store: Store, accountId: string) {
  const { rows } = await sql<{ id: number; kind: string; balance_delta_micros: number; held_delta_micros: number }>`
    select id, kind, balance_delta_micros, held_delta_micros from ledger where account_id = ${accountId} order by id desc`.execute(store.db);
  return rows;
}

/** Runs `use` on a store at `file` under the test's folder, or in memory when none is named; closed after. */
async function withStore(file: string | undefined, use: (store: Store) => Promise<void>) {
  const store = await openStore(file === undefined ? 'sqlite::memory:' : `sqlite:${path.join(dir, file)}`);
  try {
    await use(store);
  } finally {
    await store.close();
  }
}

async function listed(store: Store, accountId: string, limit = 1_000) {
  const rows = await listLedger(store, { accountId, limit });
  return rows.map(({ id, kind, balance_delta_micros, held_delta_micros }) => ({ id, kind, balance_delta_micros, held_delta_micros }));
}

/** Money steps on three accounts, interleaved, through every kind of writer: the hot ledger, a transaction of its own, a credit. */
async function interleavedSteps(store: Store) {
  const accounts = [];
  for (const name of ['a', 'b', 'c']) accounts.push((await createAccount(store, { name, creditMicros: 1_000_000, now: 1 })).id);
  for (let round = 0; round < 4; round++) {
    for (const [i, accountId] of accounts.entries()) {
      const hot = await holdFunds(store, { accountId, amountMicros: 100 + i, requestId: `req_${round}_${i}`, ...call });
      const inTransaction = await store.db
        .transaction()
        .execute((trx) => holdFundsIn(trx, { accountId, amountMicros: 50, requestId: `req_t${round}_${i}`, ...call }));
      await settleHold(store, hot.holdId, { chargeMicros: 40 + round, units: { output_token: 4 } });
      await releaseHold(store, inTransaction.holdId);
      if (round % 2 === 0) await creditAccount(store, { accountId, amountMicros: 7 });
    }
  }
  return accounts;
}

describe('the ledger chain on SQLite', () => {
  test('every writer keeps the chain: an account lists exactly the rows a scan finds, newest first', async () => {
    await withStore('writers.db', async (store) => {
      for (const accountId of await interleavedSteps(store)) {
        const expected = await scanned(store, accountId);
        assert.equal(expected.length, 1 + 4 * 4 + 2); // the opening credit, two holds and their ends a round, two credits
        assert.deepEqual(await listed(store, accountId), expected);
      }
    });
  });

  test('a listing stops at its limit, with the newest rows', async () => {
    await withStore(undefined, async (store) => {
      const [accountId] = await interleavedSteps(store);
      assert.deepEqual(await listed(store, accountId!, 3), (await scanned(store, accountId!)).slice(0, 3));
    });
  });

  test("the sums along the chain are the account's sums, and its balance checks out against them", async () => {
    await withStore(undefined, async (store) => {
      for (const accountId of await interleavedSteps(store)) {
        const rows = await scanned(store, accountId);
        const sums = await sumLedger(store, accountId);
        assert.deepEqual(sums, {
          balanceDeltaMicros: rows.reduce((sum, row) => sum + row.balance_delta_micros, 0),
          heldDeltaMicros: rows.reduce((sum, row) => sum + row.held_delta_micros, 0),
        });
        assert.equal((await checkAccountBalance(store, accountId)).consistent, true);
      }
    });
  });

  test('an account without rows lists nothing and sums to zero', async () => {
    await withStore(undefined, async (store) => {
      const { id } = await createAccount(store, { name: 'empty', creditMicros: 0, now: 1 });
      await sql`delete from ledger where account_id = ${id}`.execute(store.db); // whatever opening it had: none at all here
      await sql`update accounts set last_ledger_id = null where id = ${id}`.execute(store.db);
      assert.deepEqual(await listLedger(store, { accountId: id }), []);
      assert.deepEqual(await sumLedger(store, id), { balanceDeltaMicros: 0, heldDeltaMicros: 0 });
    });
  });

  test('listing follows the chain by row id and never scans the ledger', async () => {
    await withStore(undefined, async (store) => {
      const { id } = await createAccount(store, { name: 'plan', creditMicros: 5, now: 1 });
      const plan = (await plansOf(store.db, (db) => listLedger({ db, dialect: 'sqlite' }, { accountId: id }))).join('\n');
      assert.match(plan, /SEARCH ledger USING INTEGER PRIMARY KEY/);
      assert.doesNotMatch(plan, /SCAN ledger/);
    });
  });

  test('a store made before the chain has its rows chained when it migrates, and new rows extend the chain', async () => {
    const file = path.join(dir, 'before-the-chain.db');
    const old = await openStore(`sqlite:${file}`);
    const accounts = await interleavedSteps(old);
    // Back to the schema of migration 014, as a gateway of that version left it, then rows written as it wrote them.
    await dropTempObjects(old.db);
    for (const statement of [
      'create index ledger_account_id on ledger (account_id, id)',
      'alter table ledger drop column prev_id',
      'alter table accounts drop column last_ledger_id',
      "delete from kysely_migration where name in ('015_sqlite_ledger_chain', '018_sqlite_chain_by_hot_ledger', '030_sqlite_chain_by_writers')",
    ]) {
      await sql.raw(statement).execute(old.db);
    }
    await sql`insert into ledger (account_id, kind, balance_delta_micros, held_delta_micros, created_at) values (${accounts[1]!}, 'credit', 3, 0, 2)`.execute(
      old.db,
    );
    await sql`update accounts set balance_micros = balance_micros + 3 where id = ${accounts[1]!}`.execute(old.db);
    await old.close();

    const migrated = await openStore(`sqlite:${file}`);
    try {
      for (const accountId of accounts) assert.deepEqual(await listed(migrated, accountId), await scanned(migrated, accountId));
      await creditAccount(migrated, { accountId: accounts[0]!, amountMicros: 9 });
      assert.deepEqual(await listed(migrated, accounts[0]!), await scanned(migrated, accounts[0]!));
      const { rows } = await sql<{ name: string }>`select name from sqlite_master where type = 'index' and name = 'ledger_account_id'`.execute(migrated.db);
      assert.deepEqual(rows, []);
    } finally {
      await migrated.close();
    }
  });
});
