// The PostgreSQL helper hands a schema a finished test gave back to the next test, emptied: these
// tests check that it holds nothing of the last test, and that a schema whose tables a test changed
// is never handed out again.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'kysely';
import { createAccount } from '../../src/billing/accounts.js';
import { openStore } from '../../src/store/open.js';
import { freshSchemaUrls, requirePostgresOrSkip } from './postgres.js';

const baseUrl = await requirePostgresOrSkip('schemas handed from test to test');

describe('schemas handed from test to test', { skip: !baseUrl }, () => {
  const urls = baseUrl ? freshSchemaUrls(baseUrl) : undefined;

  /** Rows of the tables a call writes, and the ledger's next id. */
  async function leftovers(url: string) {
    const store = await openStore(url);
    try {
      const count = async (table: 'accounts' | 'ledger') =>
        Number((await store.db.selectFrom(table).select(store.db.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
      const nextLedgerId = (await sql<{ id: string }>`select nextval('ledger_id_seq') as id`.execute(store.db)).rows[0]!.id;
      return { accounts: await count('accounts'), ledger: await count('ledger'), nextLedgerId: Number(nextLedgerId) };
    } finally {
      await store.close();
    }
  }

  test('a schema given back comes back from reused() migrated, without rows, its sequences restarted', async () => {
    const url = urls!.reused();
    const store = await openStore(url);
    await createAccount(store, { name: 'left behind', creditMicros: 5 });
    await createAccount(store, { name: 'left behind too', creditMicros: 7 });
    await store.close();
    assert.deepEqual(await leftovers(url), { accounts: 2, ledger: 2, nextLedgerId: 3 });
    await urls!.giveBack(url);

    assert.equal(urls!.reused(), url);
    assert.deepEqual(await leftovers(url), { accounts: 0, ledger: 0, nextLedgerId: 1 });
  });

  test('a schema whose tables a test changed is not handed out again', async () => {
    const url = urls!.reused();
    const store = await openStore(url);
    await sql`alter table accounts add column left_by_a_test text`.execute(store.db);
    await store.close();
    await urls!.giveBack(url);

    const next = urls!.reused();
    assert.notEqual(next, url);
    assert.deepEqual(await leftovers(next), { accounts: 0, ledger: 0, nextLedgerId: 1 });
  });

  test('a schema another connection still locks is not handed out again', async () => {
    const url = urls!.reused();
    const store = await openStore(url);
    await createAccount(store, { name: 'locked', creditMicros: 5 });
    const holder = await openStore(url);
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let locked!: () => void;
    const lockTaken = new Promise<void>((resolve) => {
      locked = resolve;
    });
    // A share lock: rows can be read but not deleted until the transaction ends.
    const held = holder.db.transaction().execute(async (trx) => {
      await sql`lock table accounts in share mode`.execute(trx);
      locked();
      await released;
    });
    await lockTaken;
    await store.close();
    await urls!.giveBack(url);
    release();
    await held;
    await holder.close();

    assert.notEqual(urls!.reused(), url);
  });
});
