// Migrations 020 and 021 (store/migrations.ts, store/sqlite-pages.ts): no index of ledger rows by
// hold, and holds kept in their key's b-tree alone (WITHOUT ROWID). A store from before them keeps
// every hold as it was, its open holds can still be settled and released, and its sweeps' index
// comes through the rebuild.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { type Kysely, sql } from 'kysely';
import { checkAccountBalance, createAccount } from '../../src/billing/accounts.js';
import { holdFunds, releaseHold, settleHold } from '../../src/billing/ledger.js';
import { openStore } from '../../src/store/open.js';
import { rebuildTable } from '../../src/store/sqlite-pages.js';
import { dropTempObjects, indexNames, tableSql } from './sqlite-schema.js';

const dir = mkdtempSync(join(tmpdir(), 'tollroute-holds-rowid-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const open = (file: string) => openStore(`sqlite:${file}`, { moveUsage: { settles: 1e9, ms: 1e9 } });

const holdsOf = async (db: Kysely<any>) => (await sql`select * from holds order by id`.execute(db)).rows;

/** The schema as it was before 020 and 021: the ledger indexed by hold, holds with a rowid. */
async function undo020And021(db: Kysely<any>) {
  await dropTempObjects(db);
  await db.transaction().execute(async (trx) => {
    await sql`create index ledger_hold on ledger (hold_id)`.execute(trx);
    await rebuildTable(trx, 'holds', (create) => create.replace(/\s*without rowid\s*$/i, ''));
    await sql`delete from kysely_migration where name in ('020_no_ledger_hold_index', '021_sqlite_holds_without_rowid')`.execute(trx);
  });
}

test('a new store keeps holds without a rowid and indexes no ledger row by hold', async () => {
  const store = await open(join(dir, 'new.db'));
  try {
    assert.match(await tableSql(store.db, 'holds'), /without rowid\s*$/i);
    assert.deepEqual(await indexNames(store.db, 'ledger'), ['ledger_topups']); // credits and debits only (topup-rows.ts)
    assert.deepEqual(await indexNames(store.db, 'holds'), ['holds_open']);
  } finally {
    await store.close();
  }
});

test('a store from before 020 and 021 keeps every hold, and its open holds settle and release after the rebuild', async () => {
  const file = join(dir, 'old.db');
  let store = await open(file);
  const account = await createAccount(store, { name: 'a', creditMicros: 1_000_000 });
  const hold = (i: number) => holdFunds(store, { accountId: account.id, amountMicros: 1_000, requestId: `req_${i}`, model: 'm', endpoint: 'chat' });
  const settled = await hold(0);
  await settleHold(store, settled.holdId, { chargeMicros: 400, units: { output_token: 1 } });
  const [toSettle, toRelease] = [await hold(1), await hold(2)];
  await undo020And021(store.db);
  assert.doesNotMatch(await tableSql(store.db, 'holds'), /without rowid/i);
  assert.deepEqual(await indexNames(store.db, 'ledger'), ['ledger_hold', 'ledger_topups']);
  const holdsBefore = await holdsOf(store.db);
  await store.close();

  store = await open(file); // runs 020 and 021
  try {
    assert.match(await tableSql(store.db, 'holds'), /without rowid\s*$/i);
    assert.deepEqual(await indexNames(store.db, 'ledger'), ['ledger_topups']); // credits and debits only (topup-rows.ts)
    assert.deepEqual(await indexNames(store.db, 'holds'), ['holds_open']);
    assert.deepEqual(await holdsOf(store.db), holdsBefore);
    await settleHold(store, toSettle.holdId, { chargeMicros: 300, units: { output_token: 1 } });
    assert.deepEqual(await releaseHold(store, toRelease.holdId), { applied: true });
    const stateOf = async (id: string) => (await store.db.selectFrom('holds').select('state').where('id', '=', id).executeTakeFirstOrThrow()).state;
    assert.deepEqual([await stateOf(settled.holdId), await stateOf(toSettle.holdId), await stateOf(toRelease.holdId)], ['settled', 'settled', 'released']);
    await checkAccountBalance(store, account.id);
    const funds = await store.db.selectFrom('accounts').select(['balance_micros', 'held_micros']).where('id', '=', account.id).executeTakeFirstOrThrow();
    assert.deepEqual({ balance: Number(funds.balance_micros), held: Number(funds.held_micros) }, { balance: 1_000_000 - 400 - 300, held: 0 });
  } finally {
    await store.close();
  }
});
