// A real full disk on SQLite: the error that reaches the caller is SQLITE_FULL, the cause an
// operator can act on, not Kysely's "cannot rollback - no transaction is active".
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { sql } from 'kysely';
import { createAccount, creditAccount } from '../../src/billing/accounts.js';
import { isStoreFault } from '../../src/store/health.js';
import { openStore } from '../../src/store/open.js';

test('a transaction that fills the database fails with SQLITE_FULL, and the store works again once there is room', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'tollroute-full-'));
  const store = await openStore(`sqlite:${path.join(dir, 'full.db')}`);
  try {
    const account = await createAccount(store, { name: 'full', creditMicros: 1 });
    const { rows } = await sql<{ page_count: number }>`pragma page_count`.execute(store.db);
    await sql.raw(`pragma max_page_count = ${rows[0]!.page_count}`).execute(store.db);
    let failure: unknown;
    for (let i = 0; i < 10_000 && !failure; i++) {
      await creditAccount(store, { accountId: account.id, amountMicros: 1, note: 'x'.repeat(2_000) }).catch((error) => (failure = error));
    }
    assert.equal((failure as { code?: string }).code, 'SQLITE_FULL');
    assert.ok(isStoreFault(failure));
    await sql.raw('pragma max_page_count = 1073741823').execute(store.db);
    await creditAccount(store, { accountId: account.id, amountMicros: 1 });
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('when SQLite has already ended a failed transaction itself, the caller sees the real error, not "cannot rollback"', async () => {
  const store = await openStore('sqlite::memory:');
  try {
    const full = Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
    const failed = store.db.transaction().execute(async (trx) => {
      await sql`select 1`.execute(trx);
      // What SQLite does on some errors (SQLITE_FULL, SQLITE_IOERR at commit): the transaction is gone.
      await sql.raw('rollback').execute(trx);
      throw full;
    });
    await assert.rejects(failed, (error) => error === full);
    await createAccount(store, { name: 'after', creditMicros: 1 });
  } finally {
    await store.close();
  }
});
