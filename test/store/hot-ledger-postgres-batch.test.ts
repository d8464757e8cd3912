// The PostgreSQL hot ledger writes the steps asked for in one poll of the event loop in one statement
// per kind. These tests put many steps in one batch and check that each step's outcome and rows are
// those of the step written alone: refusals exact, each hold ended once, a failing step failing alone.
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import type pg from 'pg';
import { checkAccountBalance, createAccount } from '../../src/billing/accounts.js';
import { holdFundsIn, releaseHoldIn, settleHoldIn } from '../../src/billing/ledger.js';
import type { CoalesceLimits } from '../../src/store/hot-ledger/coalesce.js';
import { type PostgresQueryable, postgresHotLedger } from '../../src/store/hot-ledger/postgres.js';
import type { HoldEntry, HotLedger, SettleEntry, SettleResult } from '../../src/store/hot-ledger/types.js';
import { newId } from '../../src/store/ids.js';
import type { Store } from '../../src/store/open.js';
import { freshSchemas, requirePostgresOrSkip } from '../helpers/postgres.js';
import { holdRequest, NOW, openSchemaStore, schemaPool, UNITS } from './fixtures/hot-ledger-entries.js';

/** The pool, counting the statements and steps sent under each prepared statement's name. */
function countingPool(pool: pg.Pool, failing: (name: string) => Error | undefined = () => undefined) {
  const statements = new Map<string, number>();
  const steps = new Map<string, number>();
  const queryable: PostgresQueryable = {
    query(statement) {
      statements.set(statement.name, (statements.get(statement.name) ?? 0) + 1);
      const first = statement.values[0];
      steps.set(statement.name, (steps.get(statement.name) ?? 0) + (Array.isArray(first) ? first.length : 1));
      const error = failing(statement.name);
      return error ? Promise.reject(error) : pool.query(statement);
    },
  };
  const count = (name: string) => statements.get(name) ?? 0;
  /** Statements of the single-step kind: a batch's refusals, undecided steps and replays. */
  const singles = () => count('tollroute_hold') + count('tollroute_settle') + count('tollroute_release');
  return { queryable, count, singles, steps: (name: string) => steps.get(name) ?? 0 };
}

function holdEntry(accountId: string, amountMicros: number, holdId = newId('hold')): HoldEntry {
  return { holdId, ...holdRequest(accountId, amountMicros) };
}

function settleEntry(holdId: string, chargeMicros: number, usageId = newId('use')): SettleEntry {
  return { holdId, chargeMicros, units: JSON.stringify(UNITS), requestId: null, flags: ['clamped'], usageId, now: NOW + 1 };
}

const baseUrl = await requirePostgresOrSkip('PostgreSQL hot ledger batch tests');
if (baseUrl) {
  const nextSchema = freshSchemas(baseUrl);
  const postgresUrl = baseUrl;

  async function openFixture(
    t: TestContext,
    { poolSize = 10, limits, failing }: { poolSize?: number; limits?: CoalesceLimits; failing?: (name: string) => Error | undefined } = {},
  ) {
    const { store, pool, schema } = await openSchemaStore(t, postgresUrl, nextSchema(), poolSize);
    const counted = countingPool(pool, failing);
    const warnings: { msg: string; obj: Record<string, unknown> }[] = [];
    const log = { warn: (obj: object, msg: string) => warnings.push({ msg, obj: obj as Record<string, unknown> }) };
    return { store, pool, schema, counted, warnings, ledger: postgresHotLedger(counted.queryable, limits, log) };
  }

  async function balanceOf(store: Store, accountId: string) {
    const check = await checkAccountBalance(store, accountId);
    assert.equal(check.consistent, true, `account ${accountId}: ${JSON.stringify(check)}`);
    return { balance: check.balanceMicros, held: check.heldMicros };
  }

  async function placeHolds(ledger: HotLedger, accountId: string, amounts: number[]): Promise<string[]> {
    const entries = amounts.map((amount) => holdEntry(accountId, amount));
    const placed = await Promise.all(entries.map((entry) => ledger.hold(entry)));
    assert.deepEqual(placed, Array(amounts.length).fill(true));
    return entries.map((entry) => entry.holdId);
  }

  test('holds in one batch are refused only where one at a time would refuse them: 100 covers 80 and 20, not 50', async (t) => {
    const cases = [
      { credit: 100, amounts: [80, 50, 20], taken: [true, false, true] },
      { credit: 100, amounts: [60, 60, 30, 10], taken: [true, false, true, true] },
      { credit: 100, amounts: [0, 100, 1, 0], taken: [true, true, false, true] },
    ];
    const { store, counted, ledger } = await openFixture(t);
    for (const { credit, amounts, taken } of cases) {
      const account = await createAccount(store, { name: 'tight', creditMicros: credit, now: NOW });
      const before = counted.count('tollroute_hold_batch');
      const placed = await Promise.all(amounts.map((amount) => ledger.hold(holdEntry(account.id, amount))));
      assert.deepEqual(placed, taken, `holds of ${amounts.join(', ')} on ${credit}`);
      assert.equal(counted.count('tollroute_hold_batch') - before, 1, 'one batch statement');
      const heldMicros = amounts.reduce((sum, amount, i) => sum + (taken[i] ? amount : 0), 0);
      assert.deepEqual(await balanceOf(store, account.id), { balance: credit - heldMicros, held: heldMicros });
    }
  });

  test('the steps asked for in one poll share a statement: 50 concurrent holds and settles on one connection take a few statements each', async (t) => {
    const { store, counted, ledger } = await openFixture(t, { poolSize: 1 });
    const account = await createAccount(store, { name: 'busy', creditMicros: 1_000_000, now: NOW });
    const holdIds = await placeHolds(ledger, account.id, Array(50).fill(1_000));
    const settled = await Promise.all(holdIds.map((holdId) => ledger.settle(settleEntry(holdId, 600))));
    assert.ok(settled.every((result) => result.kind === 'applied'));
    for (const name of ['tollroute_hold_batch', 'tollroute_settle_batch']) {
      assert.ok(counted.count(name) <= 3, `${name}: ${counted.count(name)} statements for 50 steps`);
      assert.equal(counted.steps(name), 50);
    }
    assert.equal(counted.singles(), 0);
    assert.deepEqual(await balanceOf(store, account.id), { balance: 1_000_000 - 50 * 600, held: 0 });
  });

  test('steps batched together write the same rows as the transaction steps, one by one', async (t) => {
    const { store, pool, counted, ledger } = await openFixture(t);
    const viaTransaction = await createAccount(store, { name: 'transaction', creditMicros: 10_000, now: NOW });
    const viaBatch = await createAccount(store, { name: 'batch', creditMicros: 10_000, now: NOW });
    const amounts = [300, 500, 200, 700, 100];
    const charges = [120, 500, 450, 0]; // below, at and past the hold, and nothing; the last hold is released

    for (const [i, amount] of amounts.entries()) {
      await store.db.transaction().execute(async (trx) => {
        const { holdId } = await holdFundsIn(trx, holdEntry(viaTransaction.id, amount));
        if (i < charges.length) await settleHoldIn(trx, holdId, { chargeMicros: charges[i]!, units: UNITS, flags: ['clamped'], now: NOW + 1 });
        else await releaseHoldIn(trx, holdId, { note: 'upstream failed', now: NOW + 1 });
      });
    }
    const holdIds = await placeHolds(ledger, viaBatch.id, amounts);
    const [settled, released] = await Promise.all([
      Promise.all(charges.map((charge, i) => ledger.settle(settleEntry(holdIds[i]!, charge)))),
      ledger.release({ holdId: holdIds[4]!, note: 'upstream failed', now: NOW + 1 }),
    ]);
    assert.deepEqual(settled, [
      { kind: 'applied', chargedMicros: 120, unbilledMicros: 0 },
      { kind: 'applied', chargedMicros: 500, unbilledMicros: 0 },
      { kind: 'applied', chargedMicros: 200, unbilledMicros: 250 },
      { kind: 'applied', chargedMicros: 0, unbilledMicros: 0 },
    ]);
    assert.equal(released, true);
    assert.deepEqual([counted.count('tollroute_hold_batch'), counted.count('tollroute_settle_batch'), counted.singles()], [1, 1, 0]);
    assert.deepEqual(await rowsOf(pool, viaBatch.id), await rowsOf(pool, viaTransaction.id));
  });

  /** An account's rows without their ids, sorted by content: twins' random ids order them differently. */
  async function rowsOf(pool: pg.Pool, accountId: string) {
    const read = async (table: string) => {
      const { rows } = await pool.query(`select * from ${table} where account_id = $1`, [accountId]);
      return rows.map(({ id: _id, account_id: _account, hold_id: _hold, ...row }) => JSON.stringify(row)).sort();
    };
    const { rows } = await pool.query('select balance_micros, held_micros from accounts where id = $1', [accountId]);
    return { account: rows[0], holds: await read('holds'), ledger: await read('ledger'), usage: await read('usage') };
  }

  test('two steps on one hold in one batch: the first is applied, the other finds it ended', async (t) => {
    const { store, pool, ledger } = await openFixture(t);
    const account = await createAccount(store, { name: 'twice', creditMicros: 10_000, now: NOW });
    const [a, b, c] = await placeHolds(ledger, account.id, [1_000, 1_000, 1_000]);
    const outcomes = await Promise.all([
      ledger.settle(settleEntry(a!, 100)),
      ledger.settle(settleEntry(a!, 200)),
      ledger.release({ holdId: b!, note: null, now: NOW + 1 }),
      ledger.release({ holdId: b!, note: null, now: NOW + 1 }),
      ledger.settle(settleEntry(c!, 300)),
      ledger.release({ holdId: c!, note: null, now: NOW + 1 }),
    ]);
    assert.deepEqual(outcomes.slice(0, 4), [{ kind: 'applied', chargedMicros: 100, unbilledMicros: 0 }, { kind: 'not-open' }, true, false]);
    // A settle and a release of one hold go in statements of their own kinds: whichever locks it first ends it.
    const cSettled = (outcomes[4] as SettleResult).kind === 'applied';
    assert.deepEqual([cSettled, outcomes[5]], cSettled ? [true, false] : [false, true]);

    const { rows } = await pool.query("select hold_id, count(*)::int as ends from ledger where kind in ('settle', 'release') group by hold_id", []);
    assert.deepEqual(rows.map((row) => row.ends).sort(), [1, 1, 1]);
    assert.deepEqual(await balanceOf(store, account.id), { balance: 10_000 - 100 - (cSettled ? 300 : 0), held: 0 });
  });

  test('a step that fails in a batch fails alone; the others of its statement are written', async (t) => {
    const { store, pool, counted, ledger } = await openFixture(t);
    const account = await createAccount(store, { name: 'faulty', creditMicros: 10_000, now: NOW });
    const [taken] = await placeHolds(ledger, account.id, [100]);
    // A hold whose id is taken already, between two good ones.
    const holds = await Promise.allSettled([
      ledger.hold(holdEntry(account.id, 1_000)),
      ledger.hold(holdEntry(account.id, 1_000, taken)),
      ledger.hold(holdEntry(account.id, 1_000)),
    ]);
    assert.deepEqual(
      holds.map((outcome) => outcome.status),
      ['fulfilled', 'rejected', 'fulfilled'],
    );
    assert.match(String((holds[1] as PromiseRejectedResult).reason), /holds_pkey/);

    // A settle whose usage id is taken already, between two good ones.
    const [first, second, third, fourth] = await placeHolds(ledger, account.id, [500, 500, 500, 500]);
    assert.equal((await ledger.settle(settleEntry(first!, 100, 'use_taken'))).kind, 'applied');
    const batchesBefore = counted.count('tollroute_settle_batch');
    const settles = await Promise.allSettled([
      ledger.settle(settleEntry(second!, 100)),
      ledger.settle(settleEntry(third!, 100, 'use_taken')),
      ledger.settle(settleEntry(fourth!, 100)),
    ]);
    assert.deepEqual(
      settles.map((outcome) => outcome.status),
      ['fulfilled', 'rejected', 'fulfilled'],
    );
    assert.match(String((settles[1] as PromiseRejectedResult).reason), /usage_pkey/);
    assert.equal(counted.count('tollroute_settle_batch') - batchesBefore, 1);
    const { rows } = await pool.query('select state from holds where id = $1', [third]);
    assert.equal(rows[0].state, 'open');
    // Held: 100, two holds of 1 000 and `third`; taken: 100 by each of three settles.
    assert.deepEqual(await balanceOf(store, account.id), { balance: 10_000 - 2_600 - 300, held: 2_600 });
  });

  test('a batch statement that fails (a deadlock, say) is replayed step by step, each step applied once, and logged', async (t) => {
    const deadlock = Object.assign(new Error('deadlock detected'), { code: '40P01' });
    const { store, counted, ledger, warnings } = await openFixture(t, { failing: (name) => (name.endsWith('_batch') ? deadlock : undefined) });
    const account = await createAccount(store, { name: 'replayed', creditMicros: 1_000, now: NOW });
    const placed = await Promise.all([100, 200, 300, 500].map((amount) => ledger.hold(holdEntry(account.id, amount))));
    assert.deepEqual(placed, [true, true, true, false]);
    assert.deepEqual([counted.count('tollroute_hold_batch'), counted.count('tollroute_hold')], [1, 4]);
    assert.deepEqual(await balanceOf(store, account.id), { balance: 400, held: 600 });
    assert.deepEqual(
      warnings.map((w) => [w.msg, w.obj.kind, w.obj.steps, (w.obj.err as Error).message]),
      [['a batch of ledger steps failed; writing its steps one by one', 'hold', 4, 'deadlock detected']],
    );
  });

  test('a settle past the hold on an overdraft account is left open for the transaction step; the others of its batch are applied', async (t) => {
    const { store, pool, counted, ledger } = await openFixture(t);
    const overdraft = await createAccount(store, { name: 'overdraft', creditMicros: 1_000, overdraftMicros: 500, now: NOW });
    const plain = await createAccount(store, { name: 'plain', creditMicros: 1_000, now: NOW });
    const [within, past] = await placeHolds(ledger, overdraft.id, [300, 300]);
    const [plainPast] = await placeHolds(ledger, plain.id, [300]);
    const results = await Promise.all([
      ledger.settle(settleEntry(within!, 200)),
      ledger.settle(settleEntry(past!, 450)),
      ledger.settle(settleEntry(plainPast!, 450)),
      ledger.settle(settleEntry('hold_missing', 100)),
    ]);
    assert.deepEqual(results, [
      { kind: 'applied', chargedMicros: 200, unbilledMicros: 0 },
      { kind: 'needs-transaction' },
      { kind: 'applied', chargedMicros: 300, unbilledMicros: 150 },
      { kind: 'not-open' },
    ]);
    assert.deepEqual([counted.count('tollroute_settle_batch'), counted.singles()], [1, 0]);
    const { rows } = await pool.query('select state from holds where id = $1', [past]);
    assert.equal(rows[0].state, 'open');
    assert.deepEqual(await balanceOf(store, overdraft.id), { balance: 1_000 - 300 - 200, held: 300 });
    assert.deepEqual(await balanceOf(store, plain.id), { balance: 700, held: 0 });
  });

  test('batches locking the same accounts at once, named in opposite orders, never deadlock', async (t) => {
    // Two gateways (two pools, two ledgers) on one schema; a deadlock would show as steps replayed one by one.
    const { store, schema, counted, ledger: forward } = await openFixture(t);
    const otherPool = schemaPool(postgresUrl, schema, 10);
    t.after(() => otherPool.end());
    const otherCounted = countingPool(otherPool);
    const backward = postgresHotLedger(otherCounted.queryable);
    const accounts = await Promise.all(Array.from({ length: 20 }, (_, i) => createAccount(store, { name: `a${i}`, creditMicros: 1_000_000, now: NOW })));
    const ids = accounts.map((account) => account.id);
    const reversed = [...ids].reverse();
    for (let round = 0; round < 10; round++) {
      const [ahead, behind] = await Promise.all([
        Promise.all(ids.map((id) => placeHolds(forward, id, [1_000]).then(([holdId]) => holdId!))),
        Promise.all(reversed.map((id) => placeHolds(backward, id, [1_000]).then(([holdId]) => holdId!))),
      ]);
      await Promise.all([
        Promise.all(ahead.map((holdId) => forward.settle(settleEntry(holdId, 600)))),
        Promise.all(behind.map((holdId) => backward.release({ holdId, note: null, now: NOW + 1 }))),
      ]);
    }
    assert.deepEqual([counted.singles(), otherCounted.singles()], [0, 0]);
    assert.ok(counted.count('tollroute_hold_batch') <= 20, 'holds were batched');
    for (const id of ids) assert.deepEqual(await balanceOf(store, id), { balance: 1_000_000 - 10 * 600, held: 0 });
  });

  test('many concurrent holds, settles and releases on many accounts, some refused, leave every balance exact and equal to the ledger', async (t) => {
    const { store, pool, ledger } = await openFixture(t, { poolSize: 8 });
    const credit = 20_000;
    const accounts = await Promise.all(Array.from({ length: 10 }, (_, i) => createAccount(store, { name: `a${i}`, creditMicros: credit, now: NOW })));
    let refused = 0;
    const worker = async (w: number) => {
      for (let i = 0; i < 60; i++) {
        const accountId = accounts[(w * 7 + i * 3) % accounts.length]!.id;
        const amount = 1 + ((w * 131 + i * 17) % 2_500);
        const holdId = newId('hold');
        if (!(await ledger.hold(holdEntry(accountId, amount, holdId)))) {
          refused += 1;
          continue;
        }
        if (i % 5 === 0) assert.equal(await ledger.release({ holdId, note: null, now: NOW + 1 }), true);
        else assert.equal((await ledger.settle(settleEntry(holdId, (w * 389 + i * 7) % 3_000))).kind, 'applied');
      }
    };
    await Promise.all(Array.from({ length: 32 }, (_, w) => worker(w)));
    assert.ok(refused > 0, 'some holds were refused');
    for (const account of accounts) {
      const { balance, held } = await balanceOf(store, account.id);
      const { rows } = await pool.query('select coalesce(sum(amount_micros), 0)::bigint as taken from usage where account_id = $1', [account.id]);
      assert.deepEqual({ balance, held }, { balance: credit - rows[0].taken, held: 0 });
      assert.ok(balance >= 0);
    }
  });
}
