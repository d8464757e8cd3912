// A hold's decision in memory reads the balance this connection knows (known-balances.ts): as it
// last read it, moved by its own steps since. It follows those steps exactly, is forgotten whenever
// it may be wrong, and is only a hint: a refusal reads the store afresh, and every write re-checks
// the balance in SQL.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { createAccount } from '../../src/billing/accounts.js';
import { findAccount } from '../../src/store/accounts.js';
import { knownBalances } from '../../src/store/hot-ledger/known-balances.js';
import { sqliteSteps } from '../../src/store/hot-ledger/sqlite-steps.js';
import { UnwrittenHoldError } from '../../src/store/hot-ledger/types.js';
import type { Store } from '../../src/store/open.js';
import { Database } from '../../src/store/sqlite-driver.js';
import {
  countingRuns,
  freshStore,
  hotHold,
  moveBalanceElsewhere,
  otherConnectionBalance,
  settleOf,
  storeFile,
  unwritableSettleOf,
  withStore,
} from './hot-ledger-sqlite-fixture.js';

const decide = (store: Store, accountId: string, holdId: string, amountMicros: number) =>
  store.hotLedger!.holdAtOnce!(hotHold(accountId, holdId, amountMicros));

const withHoldsInMemory = (run: (store: Store) => Promise<void>) => withStore(run, '', undefined, { maxUnwrittenHoldMs: 60_000 });

/** An account of `credit` micros whose balance the ledger has read once (a hold decided and released). */
async function accountKnown(store: Store, credit: number): Promise<string> {
  const { id } = await createAccount(store, { name: 'a', creditMicros: credit });
  assert.equal(decide(store, id, 'hold_read', 1), true);
  assert.equal(await store.hotLedger!.release({ holdId: 'hold_read', note: null, now: 1 }), true);
  return id;
}

describe('the balance a hold is decided on', () => {
  test('is read from the store once, then known: the next decisions run no statement', async () => {
    const store = await freshStore();
    const { id } = await createAccount(store, { name: 'a', creditMicros: 10_000 });
    await store.close();
    const sqlite = new Database(storeFile());
    try {
      const { connection, runs } = countingRuns(sqlite);
      const steps = sqliteSteps(connection);
      assert.deepEqual([steps.balance(id), steps.balance(id), steps.balance(id)], [10_000, 10_000, 10_000]);
      assert.deepEqual(runs, ['select balance_micros from']);
      assert.equal(steps.balance(id, true), 10_000);
      assert.equal(runs.length, 2, 'fresh: read again');
    } finally {
      sqlite.close();
    }
  });

  test("follows this connection's own holds, settles and releases exactly, written or decided in memory", async () => {
    const store = await freshStore();
    const { id } = await createAccount(store, { name: 'a', creditMicros: 1_000_000 });
    await store.db.updateTable('accounts').set({ overdraft_micros: 5_000 }).where('id', '=', id).execute();
    await store.close();
    const sqlite = new Database(storeFile());
    try {
      const steps = sqliteSteps(sqlite);
      const open: string[] = [];
      let n = 0;
      const step = fc.oneof(
        fc.record({ kind: fc.constant('hold' as const), amount: fc.integer({ min: 0, max: 300_000 }) }),
        fc.record({ kind: fc.constant('settle' as const), charge: fc.integer({ min: 0, max: 400_000 }) }),
        fc.record({ kind: fc.constant('release' as const) }),
        fc.record({
          kind: fc.constant('hold-and-settle' as const),
          amount: fc.integer({ min: 0, max: 300_000 }),
          charge: fc.integer({ min: 0, max: 400_000 }),
        }),
        fc.record({ kind: fc.constant('hold-and-release' as const), amount: fc.integer({ min: 0, max: 300_000 }) }),
      );
      fc.assert(
        fc.property(fc.array(step, { minLength: 1, maxLength: 30 }), (run) => {
          steps.balance(id); // known from here on, by its own steps alone
          for (const s of run) {
            const holdId = `hold_${++n}`;
            const settle = (of: string, charge: number) => ({ ...settleOf(of), chargeMicros: charge, usageId: `use_${n}` });
            if (s.kind === 'hold' && steps.hold(hotHold(id, holdId, s.amount))) open.push(holdId);
            if (s.kind === 'settle' && open.length > 0) assert.equal(steps.settle(settle(open[0]!, s.charge)).kind, 'applied');
            if (s.kind === 'release' && open.length > 0) assert.equal(steps.release({ holdId: open[0]!, note: null, now: 1 }), true);
            if ((s.kind === 'settle' || s.kind === 'release') && open.length > 0) open.shift();
            if (s.kind === 'hold-and-settle') steps.holdAndSettle(hotHold(id, holdId, s.amount), settle(holdId, s.charge));
            if (s.kind === 'hold-and-release') steps.holdAndRelease(hotHold(id, holdId, s.amount), { note: null, now: 1 });
            assert.equal(steps.balance(id), steps.balance(id, true), `after ${JSON.stringify(s)}`);
          }
        }),
        { numRuns: 60 },
      );
    } finally {
      sqlite.close();
    }
  });

  test('goes unseen when another process spends it, until the write refuses the hold; then it is read again', () =>
    withHoldsInMemory(async (store) => {
      const id = await accountKnown(store, 10_000);
      moveBalanceElsewhere(id, -9_000);
      assert.equal(decide(store, id, 'hold_a', 5_000), true, 'decided on the known 10 000');
      await assert.rejects(store.hotLedger!.settle(settleOf('hold_a')), UnwrittenHoldError);
      assert.equal(decide(store, id, 'hold_b', 1_001), false, 'the refused write made the ledger read the 1 000 left');
      assert.equal(decide(store, id, 'hold_c', 1_000), true);
    }));

  test('is read afresh before a hold is refused: another process’s credit is seen at once', () =>
    withHoldsInMemory(async (store) => {
      const id = await accountKnown(store, 1_000);
      moveBalanceElsewhere(id, 10_000);
      assert.equal(decide(store, id, 'hold_a', 11_000), true);
      assert.equal(decide(store, id, 'hold_b', 1), false, 'all 11 000 kept by hold_a');
    }));

  test('is forgotten when a statement of Kysely’s runs', () =>
    withHoldsInMemory(async (store) => {
      const id = await accountKnown(store, 10_000);
      moveBalanceElsewhere(id, -9_000);
      await findAccount(store.db, id);
      assert.equal(decide(store, id, 'hold_a', 5_000), false, 'read again: 1 000');
    }));

  test('is forgotten when a batch is undone: the steps written again after it are not counted twice', () =>
    withHoldsInMemory(async (store) => {
      const id = await accountKnown(store, 10_000);
      const ledger = store.hotLedger!;
      assert.equal(await ledger.hold(hotHold(id, 'hold_a', 4_000)), true);
      assert.equal(await ledger.hold(hotHold(id, 'hold_b', 1_000)), true);
      // hold_a's settle runs at once; hold_b's joins its batch and fails, which undoes both; hold_a's is written again.
      const settled = ledger.settle({ ...settleOf('hold_a'), chargeMicros: 100 });
      const failed = ledger.settle(unwritableSettleOf('hold_b'));
      assert.equal((await settled).kind, 'applied');
      await assert.rejects(failed);
      assert.equal(otherConnectionBalance(id), 8_900, 'hold_b still held');
      assert.equal(decide(store, id, 'hold_c', 8_901), false);
      assert.equal(decide(store, id, 'hold_d', 8_900), true);
    }));
});

test('a known balance is kept for its maximum age from its read, moves with the steps, and is then read again', () => {
  const balances = knownBalances(1_000);
  balances.move('acct_a', 5); // not known: nothing to move
  assert.equal(balances.get('acct_a', 0), undefined);
  balances.read('acct_a', 100, 10);
  balances.move('acct_a', -30);
  assert.equal(balances.get('acct_a', 1_010), 70);
  assert.equal(balances.get('acct_a', 1_011), undefined);
  assert.equal(balances.get('acct_a', 20), undefined, 'forgotten once too old');
});
