// The hot ledger's steps on SQLite write through triggers of the connection's temp schema, one
// statement a step: each step lands whole or not at all, the rows are those the steps always wrote,
// and nothing of it reaches the database file or any other connection (the CLI, another instance).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type BetterSqlite3 from 'better-sqlite3';
import { sql } from 'kysely';
import { checkAccountBalance, createAccount, creditAccount } from '../../src/billing/accounts.js';
import { holdFunds, settleHold } from '../../src/billing/ledger.js';
import { type SqliteSteps, sqliteSteps } from '../../src/store/hot-ledger/sqlite-steps.js';
import { openStore } from '../../src/store/open.js';
import { Database } from '../../src/store/sqlite-driver.js';
import { countingRuns } from './hot-ledger-sqlite-fixture.js';

const dir = mkdtempSync(join(tmpdir(), 'tollroute-step-triggers-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const NEVER = { settles: 1e9, ms: 1e9 };

/** A migrated store file with one account of 1 000 000 micros; its id. */
async function storeFile(): Promise<{ file: string; accountId: string }> {
  const file = join(dir, `s${++n}.db`);
  const store = await openStore(`sqlite:${file}`, { moveUsage: NEVER });
  const { id } = await createAccount(store, { name: 'a', creditMicros: 1_000_000 });
  await store.close();
  return { file, accountId: id };
}

/** The hot ledger's steps on a connection of their own to a fresh store file (one account); closed after `run`. */
async function withSteps(run: (sqlite: BetterSqlite3.Database, steps: SqliteSteps, accountId: string) => void): Promise<void> {
  const { file, accountId } = await storeFile();
  const sqlite = new Database(file);
  try {
    run(sqlite, sqliteSteps(sqlite), accountId);
  } finally {
    sqlite.close();
  }
}

const holdEntry = (accountId: string, holdId: string) => ({
  accountId,
  holdId,
  amountMicros: 1_000,
  keyId: null,
  requestId: 'req_1',
  model: 'm',
  endpoint: 'chat',
  now: 1,
  instanceId: 'inst',
  clientRequestId: null,
});

const settleEntry = (holdId: string, usageId: string) => ({ holdId, chargeMicros: 400, units: '{}', requestId: null, flags: [], usageId, now: 2 });
const moneyOf = (sqlite: BetterSqlite3.Database, accountId: string) => ({
  account: sqlite.prepare('select balance_micros, held_micros, last_ledger_id from accounts where id = ?').get(accountId),
  ledger: sqlite.prepare('select count(*) as rows from ledger').get(),
  usage: sqlite.prepare('select count(*) as rows from usage_recent').get(),
});

test('a settle whose usage row cannot be written leaves its hold open, its account and its ledger as they were', async () => {
  await withSteps((sqlite, steps, accountId) => {
    assert.equal(steps.hold(holdEntry(accountId, 'hold_a')), true);
    const before = moneyOf(sqlite, accountId);
    // A usage row without its units (NOT NULL): its insert, the step's last write, fails.
    assert.throws(() => steps.settle({ ...settleEntry('hold_a', 'use_a'), units: null as unknown as string }), /NOT NULL|constraint/i);
    assert.deepEqual(sqlite.prepare('select state, charged_micros from holds where id = ?').get('hold_a'), { state: 'open', charged_micros: null });
    const after = moneyOf(sqlite, accountId);
    assert.deepEqual(after.account, before.account);
    assert.deepEqual(after.ledger, before.ledger);
    // The same hold then settles once the way is clear.
    assert.deepEqual(steps.settle(settleEntry('hold_a', 'use_b')), {
      kind: 'applied',
      chargedMicros: 400,
      unbilledMicros: 0,
    });
  });
});

test('a hold its balance does not cover writes nothing, and the transaction it ran in goes on', async () => {
  await withSteps((sqlite, steps, accountId) => {
    const results = sqlite.transaction(() => [
      steps.hold({ ...holdEntry(accountId, 'hold_big'), amountMicros: 1_000_001 }),
      steps.hold({ ...holdEntry('acct_missing', 'hold_nobody'), amountMicros: 0 }),
      steps.hold(holdEntry(accountId, 'hold_ok')),
    ])();
    assert.deepEqual(results, [false, false, true]);
    assert.deepEqual(sqlite.prepare('select id from holds').all(), [{ id: 'hold_ok' }]);
    assert.deepEqual(sqlite.prepare('select balance_micros, held_micros from accounts where id = ?').get(accountId), {
      balance_micros: 999_000,
      held_micros: 1_000,
    });
  });
});

test('a hold and its settle write the rows they always wrote: the hold, two ledger rows chained to the account, the account, the usage row', async () => {
  await withSteps((sqlite, steps, accountId) => {
    const first = (sqlite.prepare('select last_ledger_id from accounts where id = ?').get(accountId) as { last_ledger_id: number }).last_ledger_id;
    steps.hold(holdEntry(accountId, 'hold_b'));
    steps.settle({
      holdId: 'hold_b',
      chargeMicros: 250,
      units: '{"output_token":5}',
      requestId: null,
      flags: ['clamped'],
      usageId: 'use_b',
      now: 3,
      channel: 'c1',
      attempts: 2,
      upstreamMs: 12,
    });
    const ledger = sqlite
      .prepare('select id, kind, balance_delta_micros, held_delta_micros, hold_id, request_id, model, prev_id from ledger where id > ? order by id')
      .all(first);
    const [hold, settle] = ledger as { id: number }[];
    assert.deepEqual(ledger, [
      {
        id: hold!.id,
        kind: 'hold',
        balance_delta_micros: -1_000,
        held_delta_micros: 1_000,
        hold_id: 'hold_b',
        request_id: 'req_1',
        model: 'm',
        prev_id: first,
      },
      {
        id: settle!.id,
        kind: 'settle',
        balance_delta_micros: 750,
        held_delta_micros: -1_000,
        hold_id: 'hold_b',
        request_id: 'req_1',
        model: 'm',
        prev_id: hold!.id,
      },
    ]);
    assert.deepEqual(sqlite.prepare('select balance_micros, held_micros, last_ledger_id from accounts where id = ?').get(accountId), {
      balance_micros: 1_000_000 - 250,
      held_micros: 0,
      last_ledger_id: settle!.id,
    });
    assert.deepEqual(sqlite.prepare('select state, charged_micros, ended_at from holds where id = ?').get('hold_b'), {
      state: 'settled',
      charged_micros: 250,
      ended_at: 3,
    });
    assert.deepEqual(
      sqlite
        .prepare(
          'select account_id, hold_id, request_id, model, endpoint, units, amount_micros, unbilled_micros, flags, upstream_ms, channel, attempts from usage_recent where id = ?',
        )
        .get('use_b'),
      {
        account_id: accountId,
        hold_id: 'hold_b',
        request_id: 'req_1',
        model: 'm',
        endpoint: 'chat',
        units: '{"output_token":5}',
        amount_micros: 250,
        unbilled_micros: 0,
        flags: 'clamped',
        upstream_ms: 12,
        channel: 'c1',
        attempts: 2,
      },
    );
  });
});

test('the step triggers are the connection’s own: the file holds none, and another connection writes the ledger as before', async () => {
  const { file, accountId } = await storeFile();
  const store = await openStore(`sqlite:${file}`, { moveUsage: NEVER });
  try {
    const hold = await holdFunds(store, { accountId, amountMicros: 1_000, requestId: 'req_1', model: 'm', endpoint: 'chat' });
    // The CLI opens the same file on a connection of its own while the gateway runs.
    const cli = await openStore(`sqlite:${file}`, { moveUsage: NEVER });
    try {
      const { rows } = await sql<{ name: string }>`select name from sqlite_master where name like 'hot_%'`.execute(cli.db);
      assert.deepEqual(rows, []);
      await creditAccount(cli, { accountId, amountMicros: 5 });
    } finally {
      await cli.close();
    }
    await settleHold(store, hold.holdId, { chargeMicros: 100, units: { output_token: 1 } });
    await checkAccountBalance(store, accountId); // balance + held equals the ledger's sum, both writers' rows chained
  } finally {
    await store.close();
  }
});

test('a settle of a hold the connection took writes it from what the hold said, without reading the hold’s row', async () => {
  await withSteps((sqlite, steps, accountId) => {
    steps.hold(holdEntry(accountId, 'hold_m'));
    // Written behind the steps' back: a settle that read the row would carry this model.
    sqlite.prepare(`update holds set model = 'read-from-the-row' where id = 'hold_m'`).run();
    assert.equal(steps.settle(settleEntry('hold_m', 'use_m')).kind, 'applied');
    assert.deepEqual(sqlite.prepare('select model from usage_recent where id = ?').get('use_m'), { model: 'm' });
  });
});

test('a hold is one statement: its write checks the balance, with no read before it, and a refused one writes nothing', async () => {
  await withSteps((sqlite, _steps, accountId) => {
    const { connection, runs } = countingRuns(sqlite);
    const steps = sqliteSteps(connection);
    const held = [
      steps.hold(holdEntry(accountId, 'hold_one')),
      steps.hold({ ...holdEntry(accountId, 'hold_short'), amountMicros: 999_001 }),
      steps.hold({ ...holdEntry('acct_missing', 'hold_nobody'), amountMicros: 0 }),
    ];
    assert.deepEqual(held, [true, false, false]);
    assert.deepEqual(runs, ['insert into hot_hold', 'insert into hot_hold', 'insert into hot_hold']);
    assert.deepEqual(sqlite.prepare('select id from holds').all(), [{ id: 'hold_one' }]);
  });
});

test('a hold the connection took, then ended by another writer, is not ended again: its settle and release write nothing', async () => {
  await withSteps((sqlite, steps, accountId) => {
    steps.hold(holdEntry(accountId, 'hold_s'));
    steps.hold(holdEntry(accountId, 'hold_r'));
    // Another writer (the transaction step, a recovery sweep) ends both; the steps remember them open.
    sqlite.prepare(`update holds set state = 'released', ended_at = 5 where id in ('hold_s', 'hold_r')`).run();
    const before = moneyOf(sqlite, accountId);
    const ends = sqlite.transaction(() => [steps.settle(settleEntry('hold_s', 'use_s')), steps.release({ holdId: 'hold_r', note: null, now: 6 })])();
    assert.deepEqual(ends, [{ kind: 'not-open' }, false]);
    assert.deepEqual(moneyOf(sqlite, accountId), before);
  });
});

test('a hold ends once: a second settle or release of it writes nothing, from memory or from its row', async () => {
  await withSteps((sqlite, steps, accountId) => {
    steps.hold(holdEntry(accountId, 'hold_once'));
    assert.equal(steps.settle(settleEntry('hold_once', 'use_1')).kind, 'applied');
    const after = moneyOf(sqlite, accountId);
    assert.deepEqual(steps.settle(settleEntry('hold_once', 'use_2')), { kind: 'not-open' });
    assert.equal(steps.release({ holdId: 'hold_once', note: null, now: 3 }), false);
    // A fresh connection's steps know nothing of it: they read its row, and find it ended.
    assert.deepEqual(sqliteSteps(sqlite).settle(settleEntry('hold_once', 'use_3')), { kind: 'not-open' });
    assert.deepEqual(moneyOf(sqlite, accountId), after);
  });
});
