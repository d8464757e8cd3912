// A settle that reaches the store late keeps the price list its call was billed at: one written from
// the hot ledger's settle journal at a restart, one replayed from the settlements' journal, a late
// settle after the recovery sweep; a crash-recovered stream names the list its progress recorded
// when the store keeps it. A store from before price lists gains them without losing a row.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { type Kysely, sql } from 'kysely';
import { createAccount } from '../../src/billing/accounts.js';
import { holdFunds, settleHold } from '../../src/billing/ledger.js';
import { priceListId, savePriceList } from '../../src/billing/price-lists.js';
import { endOrphanedHolds } from '../../src/billing/recovery.js';
import { createSettlements } from '../../src/billing/settlements.js';
import type { Price } from '../../src/config/schema.js';
import { StoreHealth } from '../../src/store/health.js';
import { recordProgress } from '../../src/store/holds.js';
import { settleJournal } from '../../src/store/hot-ledger/settle-journal.js';
import { registerInstance } from '../../src/store/instances.js';
import { openStore, type Store } from '../../src/store/open.js';
import { listUsage } from '../../src/store/usage.js';
import { createUsageAllView } from '../../src/store/usage-recent.js';
import { hotHold, settleOf } from '../store/hot-ledger-sqlite-fixture.js';
import { dropTempObjects } from '../store/sqlite-schema.js';

const PRICES: Price = { input_token: 3_000_000, output_token: 15_000_000 };
const quiet = { info() {}, warn() {}, error() {} };
const call = { requestId: 'r', model: 'm', endpoint: 'e' };

const dir = mkdtempSync(join(tmpdir(), 'tollroute-price-replay-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const newFile = () => join(dir, `s${++n}`);

const pricesOfRows = async (store: Store, accountId: string) =>
  (await listUsage(store.db, { accountId })).map((row) => ({ price_id: row.price_id, prices: row.prices && JSON.parse(row.prices) }));

test('a settle answered from the settle journal and written at the restart keeps its price list', async () => {
  const file = newFile();
  const journal = `${file}-answered.jsonl`;
  let store = await openStore(`sqlite:${file}.db`);
  const { id } = await createAccount(store, { name: 'a', creditMicros: 10_000 });
  await savePriceList(store, PRICES); // as its settle did, before the crash cut the journal's write off
  await store.close();
  const answered = settleJournal(journal);
  answered.appendAll([{ hold: hotHold(id, 'hold_j', 1_000), settle: { ...settleOf('hold_j'), priceId: priceListId(PRICES) } }]);
  answered.close();

  store = await openStore(`sqlite:${file}.db`, { settleJournal: journal });
  try {
    assert.deepEqual(await pricesOfRows(store, id), [{ price_id: priceListId(PRICES), prices: PRICES }]);
  } finally {
    await store.close();
  }
});

test('a settle journal line from before price lists is written with no price list', async () => {
  const file = newFile();
  const journal = `${file}-answered.jsonl`;
  let store = await openStore(`sqlite:${file}.db`);
  const { id } = await createAccount(store, { name: 'a', creditMicros: 10_000 });
  await store.close();
  const answered = settleJournal(journal);
  answered.appendAll([{ hold: hotHold(id, 'hold_old', 1_000), settle: settleOf('hold_old') }]);
  answered.close();
  // The line as the version before wrote it: the settle's fields end with its attempts.
  const line = JSON.parse(readFileSync(journal, 'utf8')) as unknown[];
  writeFileSync(journal, `${JSON.stringify(line.slice(0, -1))}\n`);

  store = await openStore(`sqlite:${file}.db`, { settleJournal: journal });
  try {
    assert.deepEqual(await pricesOfRows(store, id), [{ price_id: null, prices: null }]);
  } finally {
    await store.close();
  }
});

test('a settle replayed from the settlements’ journal keeps its prices, kept by the replay', async () => {
  const store = await openStore('sqlite::memory:');
  try {
    const { id } = await createAccount(store, { name: 'a', creditMicros: 10_000 });
    const { holdId } = await holdFunds(store, { accountId: id, amountMicros: 1_000, ...call });
    const journalPath = join(mkdtempSync(join(dir, 'pending-')), 'pending.jsonl');
    writeFileSync(journalPath, `${JSON.stringify({ kind: 'settle', holdId, model: 'm', chargeMicros: 400, units: { output_token: 1 }, prices: PRICES })}\n`);
    const settlements = createSettlements({
      store,
      health: new StoreHealth(quiet),
      journalPath,
      firstRetryMs: 3_600_000,
      metrics: { addBilled() {}, addUnbilled() {} },
      log: quiet,
    });
    assert.equal(await settlements.replayJournal(), 1);
    settlements.stop();
    assert.deepEqual(await pricesOfRows(store, id), [{ price_id: priceListId(PRICES), prices: PRICES }]);
  } finally {
    await store.close();
  }
});

/** A stream's hold of a dead instance, with `progress` recorded; the sweep that ends it. */
async function crashedStream(store: Store, progress: object) {
  const { id } = await createAccount(store, { name: 'crashed', creditMicros: 10_000 });
  const now = Date.now();
  await registerInstance(store.db, { id: 'inst_dead', now: now - 60_000 });
  const { holdId } = await holdFunds(store, { accountId: id, amountMicros: 1_000, ...call, instanceId: 'inst_dead' });
  await recordProgress(store.db, [{ id: holdId, progress: JSON.stringify({ units: { output_token: 5 }, charge_micros: 60, ...progress }) }]);
  await endOrphanedHolds(store, { heartbeatBefore: now - 20_000, legacyCreatedBefore: 0, log: quiet });
  return id;
}

test('a crash-recovered stream names the price list its progress recorded', async () => {
  const store = await openStore('sqlite::memory:');
  try {
    await savePriceList(store, PRICES);
    const id = await crashedStream(store, { price_id: priceListId(PRICES) });
    assert.deepEqual(await pricesOfRows(store, id), [{ price_id: priceListId(PRICES), prices: PRICES }]);
  } finally {
    await store.close();
  }
});

test('a crash-recovered stream whose price list the store does not keep names none', async () => {
  const store = await openStore('sqlite::memory:');
  try {
    const id = await crashedStream(store, { price_id: priceListId(PRICES) });
    assert.deepEqual(await pricesOfRows(store, id), [{ price_id: null, prices: null }]);
  } finally {
    await store.close();
  }
});

/** The schema as it was before 029: no price_lists, no price_id, the view of the columns before. */
async function undo029(db: Kysely<any>) {
  await dropTempObjects(db);
  const before =
    'id, account_id, key_id, hold_id, request_id, model, endpoint, units, amount_micros, created_at, unbilled_micros, flags, client_request_id, upstream_ms, channel, attempts';
  await sql`drop view usage_all`.execute(db);
  await sql`alter table usage drop column price_id`.execute(db);
  await sql`alter table usage_recent drop column price_id`.execute(db);
  await sql`drop table price_lists`.execute(db);
  await createUsageAllView(db, before);
  await sql`delete from kysely_migration where name = '029_usage_price_lists'`.execute(db);
}

test('a store from before price lists keeps its usage rows, with none, and names the lists of calls settled after', async () => {
  const file = `${newFile()}.db`;
  let store = await openStore(`sqlite:${file}`);
  const { id } = await createAccount(store, { name: 'a', creditMicros: 10_000 });
  const old = await holdFunds(store, { accountId: id, amountMicros: 1_000, ...call });
  await settleHold(store, old.holdId, { chargeMicros: 100, units: { call: 1 } });
  await undo029(store.db);
  await store.close();

  store = await openStore(`sqlite:${file}`); // runs 029
  try {
    const { holdId } = await holdFunds(store, { accountId: id, amountMicros: 1_000, ...call });
    await settleHold(store, holdId, { chargeMicros: 100, units: { call: 1 }, prices: PRICES });
    const rows = await pricesOfRows(store, id);
    assert.deepEqual(rows, [
      { price_id: priceListId(PRICES), prices: PRICES },
      { price_id: null, prices: null },
    ]);
    const viewed = await sql<{ price_id: string | null }>`select price_id from usage_all order by created_at`.execute(store.db);
    assert.equal(viewed.rows.length, 2, 'the view lists both rows, with the new column');
  } finally {
    await store.close();
  }
});
