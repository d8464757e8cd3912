// Migration 022 (store/sqlite-pages.ts): usage_recent as a plain rowid table without a key, so that
// a settle's usage row is appended to the last page instead of going into a b-tree of text keys.
// Rows waiting there come through the rebuild, and the readers and the mover go on as before.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { type Kysely, sql } from 'kysely';
import { createAccount } from '../../src/billing/accounts.js';
import { holdFunds, settleHold } from '../../src/billing/ledger.js';
import { openStore, type Store } from '../../src/store/open.js';
import { rebuildTable } from '../../src/store/sqlite-pages.js';
import { listUsage } from '../../src/store/usage.js';
import { createUsageAllView } from '../../src/store/usage-recent.js';
import { holdEntry, settleEntry, withCountedLog } from './counted-log.js';
import { dropTempObjects, tableSql } from './sqlite-schema.js';

const dir = mkdtempSync(join(tmpdir(), 'tollroute-usage-unkeyed-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const newFile = () => join(dir, `u${++n}.db`);
const NEVER = { settles: 1e9, ms: 1e9 };
const open = (file: string, moveUsage = NEVER) => openStore(`sqlite:${file}`, { moveUsage });
const rowsOf = async (db: Kysely<any>, table: string) => (await sql.raw(`select * from ${table} order by id`).execute(db)).rows;
const count = async (store: Store, table: string) => Number((await sql.raw<{ n: number }>(`select count(*) as n from ${table}`).execute(store.db)).rows[0]!.n);

/** The schema as it was before 022: usage_recent keyed by its id, WITHOUT ROWID. */
async function undo022(db: Kysely<any>) {
  await dropTempObjects(db);
  await db.transaction().execute(async (trx) => {
    await sql`drop view usage_all`.execute(trx);
    await rebuildTable(trx, 'usage_recent', (create) => `${create.replace('"id" text not null', '"id" text primary key')} without rowid`);
    await createUsageAllView(trx);
    await sql`delete from kysely_migration where name = '022_sqlite_recent_usage_unkeyed'`.execute(trx);
  });
}

async function billCalls(store: Store, accountId: string, calls: number) {
  for (let i = 0; i < calls; i++) {
    const hold = await holdFunds(store, { accountId, amountMicros: 1_000, requestId: `req_${i}`, model: 'm', endpoint: 'chat' });
    await settleHold(store, hold.holdId, { chargeMicros: 100 + i, units: { output_token: 1 } });
  }
}

test('a new store keeps usage_recent as a plain rowid table, with no key and no index', async () => {
  const store = await open(newFile());
  try {
    const create = await tableSql(store.db, 'usage_recent');
    assert.doesNotMatch(create, /primary key|without rowid/i);
    assert.match(create, /"id" text not null/);
    const indexes = await sql`select name from sqlite_master where type = 'index' and tbl_name = 'usage_recent'`.execute(store.db);
    assert.deepEqual(indexes.rows, []);
  } finally {
    await store.close();
  }
});

test('a store from before 022 keeps its waiting usage rows: the readers find them and the next move takes them', async () => {
  const file = newFile();
  let store = await open(file);
  const account = await createAccount(store, { name: 'a', creditMicros: 1_000_000 });
  await billCalls(store, account.id, 3);
  await undo022(store.db);
  assert.match(await tableSql(store.db, 'usage_recent'), /without rowid\s*$/i);
  const waiting = await rowsOf(store.db, 'usage_recent');
  assert.equal(waiting.length, 3);
  await store.close();

  store = await open(file, { settles: 1, ms: 1e9 }); // runs 022; moves after every settle
  try {
    assert.doesNotMatch(await tableSql(store.db, 'usage_recent'), /primary key|without rowid/i);
    assert.deepEqual(await rowsOf(store.db, 'usage_recent'), waiting);
    assert.equal((await listUsage(store.db, { accountId: account.id })).length, 3);
    await billCalls(store, account.id, 1);
    assert.deepEqual([await count(store, 'usage_recent'), await count(store, 'usage')], [0, 4]);
  } finally {
    await store.close();
  }
});

/** Frames the log gains for `pairs` holds and settles written `batch` steps to a commit, as a busy gateway batches them. */
function framesForBatches(file: string, pairs: number, batch: number): number {
  return withCountedLog(file, ({ sqlite, steps, accountId, frames }) => {
    const before = frames();
    for (let first = 0; first < pairs; first += batch) {
      const ids = Array.from({ length: batch }, (_, i) => String(first + i).padStart(8, '0'));
      sqlite.transaction(() => {
        for (const id of ids) steps.hold(holdEntry(accountId, `hold_${id}`, 1, `req_${id}`));
      })();
      sqlite.transaction(() => {
        for (const id of ids) steps.settle(settleEntry(`hold_${id}`, `use_${id}`, 2, '{"input_token":6,"output_token":7}'));
      })();
    }
    return frames() - before;
  });
}

test('settles batched as under load write fewer pages of the log than with usage_recent keyed by id', async () => {
  const [unkeyed, keyed] = [newFile(), newFile()];
  for (const file of [unkeyed, keyed]) {
    const store = await open(file);
    await createAccount(store, { name: 'a', creditMicros: 1_000_000_000 });
    if (file === keyed) await undo022(store.db);
    await store.close();
  }
  const before = framesForBatches(keyed, 2_000, 10);
  const after = framesForBatches(unkeyed, 2_000, 10);
  assert.ok(after < before * 0.95, `${after} frames against ${before}`);
});
