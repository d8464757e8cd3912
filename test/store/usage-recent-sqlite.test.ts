// SQLite's hot ledger writes a settle's usage row to usage_recent and moves those rows into usage
// from time to time (store/usage-recent.ts): readers see every row once wherever it is, a move
// takes them all in account order, and a move that fails loses nothing.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { checkAccountBalance, createAccount } from '../../src/billing/accounts.js';
import { holdFunds, settleHold } from '../../src/billing/ledger.js';
import { openStore, type Store } from '../../src/store/open.js';
import { listUsage, spendByModel } from '../../src/store/usage.js';
import type { UsageMoveSchedule } from '../../src/store/usage-recent.js';
import { usageRow } from '../helpers/account-rows.js';
import { LOAD_TYPESCRIPT } from '../helpers/processes.js';
import { plansOf } from './query-plans.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/settle-and-move.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const KILLS = 5;
const dir = mkdtempSync(join(tmpdir(), 'tollroute-usage-recent-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const NEVER = 1e9;

function recordingLog() {
  const warnings: string[] = [];
  return { warnings, log: { warn: (_obj: object, msg: string) => warnings.push(msg) } };
}

async function withStore(moveUsage: UsageMoveSchedule, run: (store: Store, file: string) => Promise<void>, log = recordingLog().log) {
  const file = join(dir, `s${++n}.db`);
  const store = await openStore(`sqlite:${file}`, { moveUsage, log });
  try {
    await run(store, file);
  } finally {
    await store.close();
  }
}

/** Holds and settles one call of `chargeMicros` on the account, one after the other. */
async function billedCall(store: Store, accountId: string, chargeMicros: number, model = 'm') {
  const hold = await holdFunds(store, { accountId, amountMicros: 1_000, requestId: `req_${chargeMicros}`, model, endpoint: 'chat' });
  await settleHold(store, hold.holdId, { chargeMicros, units: { output_token: 1 } });
}

const count = async (store: Store, table: 'usage' | 'usage_recent') =>
  Number(
    (
      await store.db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

/** The rows of usage in the order the moves wrote them. */
const movedRows = async (store: Store) =>
  (await sql<{ account_id: string; amount_micros: number }>`select account_id, amount_micros from usage order by rowid`.execute(store.db)).rows;

describe('usage rows on SQLite: usage_recent, then usage', () => {
  test('a settle writes its usage row to usage_recent, where the readers find it', () =>
    withStore({ settles: NEVER, ms: NEVER }, async (store) => {
      const account = await createAccount(store, { name: 'a', creditMicros: 10_000 });
      await billedCall(store, account.id, 300);
      assert.deepEqual([await count(store, 'usage_recent'), await count(store, 'usage')], [1, 0]);
      assert.deepEqual(
        (await listUsage(store.db, { accountId: account.id })).map((row) => row.amount_micros),
        [300],
      );
    }));

  test('the move due after so many settles takes every waiting row into usage, in account order, and the readers answer as before', () =>
    withStore({ settles: 9, ms: NEVER }, async (store) => {
      const accounts: string[] = [];
      for (const name of ['a', 'b', 'c']) accounts.push((await createAccount(store, { name, creditMicros: 100_000 })).id);
      for (let i = 0; i < 8; i++) await billedCall(store, accounts[i % 3]!, 10 + i, `m${i % 2}`);
      const before = await Promise.all(accounts.map((accountId) => listUsage(store.db, { accountId })));
      const spendBefore = await spendByModel(store.db, { accountId: accounts[0]! });
      assert.equal(await count(store, 'usage'), 0, 'eight settles: no move yet');
      await billedCall(store, accounts[0]!, 99, 'm0');
      assert.deepEqual([await count(store, 'usage_recent'), await count(store, 'usage')], [0, 9]);
      assert.deepEqual(
        (await movedRows(store)).map((row) => row.account_id),
        [...accounts].sort().flatMap((id) => Array(id === accounts[0] ? 4 : id === accounts[1] ? 3 : 2).fill(id)),
      );
      const after = await Promise.all(accounts.map((accountId) => listUsage(store.db, { accountId })));
      assert.deepEqual(after[1], before[1]);
      assert.deepEqual(after[2], before[2]);
      assert.deepEqual(after[0]!.slice(1), before[0]);
      const spendAfter = await spendByModel(store.db, { accountId: accounts[0]! });
      assert.deepEqual(spendAfter, [
        { ...spendBefore[0]!, requests: spendBefore[0]!.requests + 1, amountMicros: spendBefore[0]!.amountMicros + 99 },
        ...spendBefore.slice(1),
      ]);
    }));

  test('a move takes at most its rows, the oldest first and in account order, and the commits after it move the rest', () =>
    withStore({ settles: 6, ms: NEVER, rows: 4 }, async (store) => {
      const accounts: string[] = [];
      for (const name of ['a', 'b']) accounts.push((await createAccount(store, { name, creditMicros: 100_000 })).id);
      const [a, b] = accounts as [string, string];
      // b before a in time, so that a move's account order differs from the order the rows came in
      for (const [i, account] of [b, a, b, a, a, b].entries()) await billedCall(store, account, 10 + i);
      assert.deepEqual([await count(store, 'usage_recent'), await count(store, 'usage')], [2, 4], 'the sixth settle moved the four oldest');
      // Grouped by account in the order of their ids; within an account by time, then by the random
      // part of the usage id (two settles in one millisecond come in either order).
      const firstMove = await movedRows(store);
      const [first, second] = [a, b].sort() as [string, string];
      assert.deepEqual(
        firstMove.map((row) => row.account_id),
        [first, first, second, second],
      );
      const amountsOf = (account: string) =>
        firstMove
          .filter((row) => row.account_id === account)
          .map((row) => row.amount_micros)
          .sort((x, y) => x - y);
      assert.deepEqual(
        [amountsOf(a), amountsOf(b)],
        [
          [11, 13],
          [10, 12],
        ],
      );
      const spendBefore = await Promise.all(accounts.map((accountId) => spendByModel(store.db, { accountId })));
      await holdFunds(store, { accountId: a, amountMicros: 1_000, requestId: 'req_next', model: 'm', endpoint: 'chat' });
      assert.deepEqual([await count(store, 'usage_recent'), await count(store, 'usage')], [0, 6], 'the next commit moved the two left');
      assert.deepEqual(
        (await movedRows(store))
          .slice(4)
          .map((row) => row.amount_micros)
          .sort((x, y) => x - y),
        [14, 15],
      );
      assert.deepEqual(await Promise.all(accounts.map((accountId) => spendByModel(store.db, { accountId }))), spendBefore);
      await holdFunds(store, { accountId: b, amountMicros: 1_000, requestId: 'req_after', model: 'm', endpoint: 'chat' });
      assert.equal(await count(store, 'usage'), 6, 'nothing left: no move until the schedule says');
    }));

  test('a move is also due once its interval has passed, at the next commit', () =>
    // 300 ms: the first settle must commit before the interval ends, even on a loaded machine (50 ms was not always enough)
    withStore({ settles: NEVER, ms: 300 }, async (store) => {
      const account = await createAccount(store, { name: 'a', creditMicros: 10_000 });
      await billedCall(store, account.id, 1);
      await new Promise((resolve) => setTimeout(resolve, 350));
      assert.equal(await count(store, 'usage'), 0, 'no commit since: no move');
      await holdFunds(store, { accountId: account.id, amountMicros: 1_000, requestId: 'req_2', model: 'm', endpoint: 'chat' });
      assert.deepEqual([await count(store, 'usage_recent'), await count(store, 'usage')], [0, 1]);
    }));

  test('rows left in usage_recent when the process stopped are read after a restart and moved by the next move', async () => {
    const file = join(dir, `s${++n}.db`);
    const first = await openStore(`sqlite:${file}`, { moveUsage: { settles: NEVER, ms: NEVER } });
    const account = await createAccount(first, { name: 'a', creditMicros: 10_000 });
    await billedCall(first, account.id, 5);
    await first.close();
    const second = await openStore(`sqlite:${file}`, { moveUsage: { settles: 1, ms: NEVER } });
    try {
      assert.deepEqual((await listUsage(second.db, { accountId: account.id })).length, 1);
      await billedCall(second, account.id, 6);
      assert.deepEqual([await count(second, 'usage_recent'), await count(second, 'usage')], [0, 2]);
    } finally {
      await second.close();
    }
  });

  test('a move that fails leaves its rows in usage_recent, readable, logs a warning, and the next move takes them', async () => {
    const recorded = recordingLog();
    await withStore(
      { settles: 1, ms: NEVER },
      async (store) => {
        const account = await createAccount(store, { name: 'a', creditMicros: 10_000 });
        await sql`create trigger refuse_usage before insert on usage begin select raise(abort, 'disk full'); end`.execute(store.db);
        await billedCall(store, account.id, 7);
        assert.deepEqual([await count(store, 'usage_recent'), await count(store, 'usage')], [1, 0]);
        assert.equal((await listUsage(store.db, { accountId: account.id })).length, 1);
        assert.match(recorded.warnings.join('\n'), /moving usage rows from usage_recent failed/);
        await sql`drop trigger refuse_usage`.execute(store.db);
        await billedCall(store, account.id, 8);
        assert.deepEqual([await count(store, 'usage_recent'), await count(store, 'usage')], [0, 2]);
      },
      recorded.log,
    );
  });

  test('the readers search usage by its account index and scan only usage_recent', () =>
    withStore({ settles: NEVER, ms: NEVER }, async (store) => {
      const account = await createAccount(store, { name: 'a', creditMicros: 10_000 });
      await store.db
        .insertInto('usage')
        .values(usageRow(account.id, { id: 'use_1', createdAt: 1 }))
        .execute();
      for (const read of [
        (db: typeof store.db) => listUsage(db, { accountId: account.id, fromMs: 0 }),
        (db: typeof store.db) => spendByModel(db, { accountId: account.id }),
      ]) {
        const plan = (await plansOf(store.db, read)).join('\n');
        assert.match(plan, /SEARCH usage USING INDEX usage_account_created/);
        assert.doesNotMatch(plan, /SCAN usage(?!_recent)/);
      }
    }));

  test('a process killed (SIGKILL) while it settles and moves usage rows loses none and writes none twice', async () => {
    const url = `sqlite:${join(dir, `s${++n}.db`)}`;
    const setup = await openStore(url);
    const accounts: string[] = [];
    for (let i = 0; i < 4; i++) accounts.push((await createAccount(setup, { name: `a${i}`, creditMicros: 10_000_000_000 })).id);
    await setup.close();
    for (let kill = 0; kill < KILLS; kill++) {
      const child = spawn(process.execPath, ['--import', LOAD_TYPESCRIPT, FIXTURE, url, ...accounts], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (chunk) => (stderr += chunk));
      const exited = once(child, 'exit');
      const first = await Promise.race([createInterface({ input: child.stdout })[Symbol.asyncIterator]().next(), exited.then(() => ({ value: stderr }))]);
      assert.equal(first.value, 'ready');
      await new Promise((resolve) => setTimeout(resolve, 100 + Math.random() * 300));
      child.kill('SIGKILL');
      await exited;
    }
    const store = await openStore(url, { moveUsage: { settles: NEVER, ms: NEVER } });
    try {
      const settled = await store.db.selectFrom('holds').select(['id', 'charged_micros']).where('state', '=', 'settled').execute();
      const usage = await store.db.selectFrom('usage_all').select(['id', 'hold_id', 'amount_micros']).execute();
      assert.ok((await count(store, 'usage')) > 0, 'some rows were moved');
      assert.equal(new Set(usage.map((row) => row.id)).size, usage.length, 'no usage row twice');
      const usageByHold = new Map(usage.map((row) => [row.hold_id, row.amount_micros]));
      assert.equal(usage.length, settled.length, 'one usage row per settled hold');
      for (const hold of settled) assert.equal(usageByHold.get(hold.id), hold.charged_micros, `usage of hold ${hold.id}`);
      for (const accountId of accounts) assert.equal((await checkAccountBalance(store, accountId)).consistent, true);
    } finally {
      await store.close();
    }
  });
});
