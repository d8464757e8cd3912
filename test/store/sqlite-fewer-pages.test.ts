// Migration 017 (store/sqlite-pages.ts): the ledger without AUTOINCREMENT and usage_recent without
// a rowid, so that a hold and its settle write fewer pages of SQLite's log; rows, ids, the account
// chain and the triggers come through the rebuild unchanged.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { type Kysely, sql } from 'kysely';
import { checkAccountBalance, createAccount } from '../../src/billing/accounts.js';
import { holdFunds, settleHold } from '../../src/billing/ledger.js';
import { openStore, type Store } from '../../src/store/open.js';
import { rebuildForFewerPages, rebuildTable } from '../../src/store/sqlite-pages.js';
import { createUsageAllView } from '../../src/store/usage-recent.js';
import { holdEntry, settleEntry, withCountedLog } from './counted-log.js';
import { dropTempObjects, indexesAndTriggers, tableSql } from './sqlite-schema.js';

const dir = mkdtempSync(join(tmpdir(), 'tollroute-fewer-pages-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const NEVER = { settles: 1e9, ms: 1e9 };
const newFile = () => join(dir, `s${++n}.db`);
const open = (file: string) => openStore(`sqlite:${file}`, { moveUsage: NEVER });

const rowsOf = async (db: Kysely<any>, table: string) => (await sql.raw(`select * from ${table} order by id`).execute(db)).rows;

/** Calls billed through the hot ledger, their usage rows left in usage_recent. */
async function billCalls(store: Store, accountId: string, calls: number) {
  for (let i = 0; i < calls; i++) {
    const hold = await holdFunds(store, { accountId, amountMicros: 1_000, requestId: `req_${i}`, model: 'm', endpoint: 'chat' });
    await settleHold(store, hold.holdId, { chargeMicros: 100 + i, units: { output_token: 1 } });
  }
}

/**
 * The schema as it was before 017: the ledger with AUTOINCREMENT, usage_recent keyed by id with a
 * rowid (and the index for its key beside it). 022, which drops that key, is undone with it, so a
 * store opened again runs both.
 */
async function undo017(db: Kysely<any>) {
  await dropTempObjects(db);
  await db.transaction().execute(async (trx) => {
    await rebuildTable(trx, 'ledger', (create) => create.replace(/"id" integer primary key/i, '"id" integer primary key autoincrement'));
    await sql`drop view usage_all`.execute(trx);
    await rebuildTable(trx, 'usage_recent', (create) => create.replace('"id" text not null', '"id" text primary key'));
    await createUsageAllView(trx);
    await sql`delete from kysely_migration where name in ('017_sqlite_fewer_pages', '022_sqlite_recent_usage_unkeyed')`.execute(trx);
  });
}

test('a store from before 017 keeps every ledger and usage row, with its id, and new ledger ids go on from the last', async () => {
  const file = newFile();
  let store = await open(file);
  const account = await createAccount(store, { name: 'a', creditMicros: 1_000_000 });
  await billCalls(store, account.id, 5);
  await undo017(store.db);
  assert.match(await tableSql(store.db, 'ledger'), /autoincrement/i);
  const ledgerBefore = await rowsOf(store.db, 'ledger');
  const usageBefore = await rowsOf(store.db, 'usage_recent');
  const ledgerIndexesBefore = await indexesAndTriggers(store.db, 'ledger');
  assert.equal(usageBefore.length, 5);
  await store.close();

  store = await open(file); // runs 017, then 022
  try {
    assert.doesNotMatch(await tableSql(store.db, 'ledger'), /autoincrement/i);
    assert.doesNotMatch(await tableSql(store.db, 'usage_recent'), /primary key|without rowid/i);
    assert.deepEqual(await rowsOf(store.db, 'ledger'), ledgerBefore);
    assert.deepEqual(await rowsOf(store.db, 'usage_recent'), usageBefore);
    await checkAccountBalance(store, account.id);

    await billCalls(store, account.id, 1);
    const ledgerAfter = (await rowsOf(store.db, 'ledger')) as { id: number; prev_id: number | null; account_id: string }[];
    const lastBefore = Math.max(...ledgerBefore.map((row) => Number((row as { id: number }).id)));
    const added = ledgerAfter.filter((row) => row.id > lastBefore);
    assert.deepEqual(
      added.map((row) => row.id),
      [lastBefore + 1, lastBefore + 2],
    );
    // the chain came through: each new row names the account's previous one
    assert.deepEqual(
      added.map((row) => row.prev_id),
      [lastBefore, lastBefore + 1],
    );
    await checkAccountBalance(store, account.id);
    assert.deepEqual(await indexesAndTriggers(store.db, 'ledger'), ledgerIndexesBefore);
  } finally {
    await store.close();
  }
});

test('running the rebuild again (two processes migrating at once) changes nothing', async () => {
  const store = await open(newFile());
  try {
    const account = await createAccount(store, { name: 'a', creditMicros: 1_000_000 });
    await billCalls(store, account.id, 3);
    const schema = async () => (await sql<{ sql: string }>`select sql from sqlite_master where sql is not null order by name`.execute(store.db)).rows;
    const [schemaBefore, ledgerBefore, usageBefore] = [await schema(), await rowsOf(store.db, 'ledger'), await rowsOf(store.db, 'usage_recent')];
    await rebuildForFewerPages(store.db);
    assert.deepEqual(await schema(), schemaBefore);
    assert.deepEqual(await rowsOf(store.db, 'ledger'), ledgerBefore);
    assert.deepEqual(await rowsOf(store.db, 'usage_recent'), usageBefore);
  } finally {
    await store.close();
  }
});

/** Pages each commit adds to the log, for hold and settle pairs written one commit each (as calls one at a time are). */
function pagesPerCommit(file: string, pairs: number): { hold: number; settle: number } {
  return withCountedLog(file, ({ sqlite, steps, accountId, frames }) => {
    const hold: number[] = [];
    const settle: number[] = [];
    for (let i = 0; i < pairs; i++) {
      const id = String(i).padStart(6, '0');
      let before = frames();
      sqlite.transaction(() => steps.hold(holdEntry(accountId, `hold_p${id}`, 1 + i)))();
      hold.push(frames() - before);
      before = frames();
      sqlite.transaction(() => steps.settle(settleEntry(`hold_p${id}`, `use_p${id}`, 1 + i)))();
      settle.push(frames() - before);
    }
    const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    return { hold: median(hold), settle: median(settle) };
  });
}

test('a hold and its settle each write fewer pages of the log than before 017 (8 and 9)', async () => {
  const migrated = newFile();
  const old = newFile();
  for (const file of [migrated, old]) {
    const store = await open(file);
    await createAccount(store, { name: 'a', creditMicros: 1_000_000_000 });
    if (file === old) await undo017(store.db);
    await store.close();
  }
  const before = pagesPerCommit(old, 21);
  const after = pagesPerCommit(migrated, 21);
  assert.deepEqual(after, { hold: before.hold - 1, settle: before.settle - 2 });
});
