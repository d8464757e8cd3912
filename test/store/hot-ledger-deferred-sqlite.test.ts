// Holds decided in memory (the SQLite hot ledger's holdAtOnce): written with their settle as one
// step, or alone when a stream, a statement of Kysely's or their age needs them; decided against
// the balance less what the unwritten ones keep; and when they cannot be written, nothing of them
// is, and their end says so.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { checkAccountBalance, createAccount } from '../../src/billing/accounts.js';
import { holdFunds, settleHold } from '../../src/billing/ledger.js';
import { findAccount } from '../../src/store/accounts.js';
import { UnwrittenHoldError } from '../../src/store/hot-ledger/types.js';
import type { Store } from '../../src/store/open.js';
import {
  hotHold,
  moveBalanceElsewhere,
  otherConnectionBalance,
  readCommitted,
  settleOf,
  storeFile,
  withStore,
  writeLockTakenBy,
} from './hot-ledger-sqlite-fixture.js';

const decide = (store: Store, accountId: string, holdId: string, amountMicros: number) =>
  store.hotLedger!.holdAtOnce!(hotHold(accountId, holdId, amountMicros));

/** What a second connection sees of the hold's row (undefined: none) and of the account's ledger kinds. */
const committedRows = (accountId: string, holdId: string) =>
  readCommitted((other) => ({
    hold: other.prepare('select state, amount_micros, charged_micros from holds where id = ?').get(holdId),
    kinds: other.prepare('select kind from ledger where account_id = ? order by id').pluck().all(accountId),
  }));

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/**
 * A store whose unwritten holds the timer writes after `maxUnwrittenHoldMs`; by default so long
 * after that only what the test does writes them.
 */
const withHoldsInMemory = (run: (store: Store) => Promise<void>, maxUnwrittenHoldMs = 60_000) => withStore(run, '', undefined, { maxUnwrittenHoldMs });

describe('a hold decided in memory', () => {
  test('writes nothing until its settle, which writes the hold already settled with both ledger rows and the usage row', () =>
    withHoldsInMemory(async (store) => {
      const account = await createAccount(store, { name: 'a', creditMicros: 10_000 });
      assert.equal(decide(store, account.id, 'hold_a', 4_000), true);
      assert.deepEqual(committedRows(account.id, 'hold_a'), { hold: undefined, kinds: ['credit'] });
      assert.equal(otherConnectionBalance(account.id), 10_000);
      const settled = await store.hotLedger!.settle({ ...settleOf('hold_a'), chargeMicros: 2_500 });
      assert.deepEqual(settled, { kind: 'applied', chargedMicros: 2_500, unbilledMicros: 0 });
      assert.deepEqual(committedRows(account.id, 'hold_a'), {
        hold: { state: 'settled', amount_micros: 4_000, charged_micros: 2_500 },
        kinds: ['credit', 'hold', 'settle'],
      });
      assert.deepEqual(await findAccount(store.db, account.id).then((a) => [a?.balance_micros, a?.held_micros]), [7_500, 0]);
      assert.equal((await checkAccountBalance(store, account.id)).consistent, true);
      const usage = await store.db.selectFrom('usage_recent').select(['hold_id', 'amount_micros']).where('account_id', '=', account.id).execute();
      assert.deepEqual(usage, [{ hold_id: 'hold_a', amount_micros: 2_500 }]);
    }));

  test('is decided against the balance less what the unwritten holds of the account keep, and so is a hold written at once', () =>
    withHoldsInMemory(async (store) => {
      const account = await createAccount(store, { name: 'a', creditMicros: 10_000 });
      assert.equal(decide(store, account.id, 'hold_a', 6_000), true);
      assert.equal(decide(store, account.id, 'hold_b', 5_000), false, '4 000 is left');
      assert.equal(decide(store, account.id, 'hold_c', 4_000), true);
      assert.equal(await store.hotLedger!.hold(hotHold(account.id, 'hold_d', 1)), false, 'nothing is left');
      assert.equal(await store.hotLedger!.release({ holdId: 'hold_a', note: null, now: 1 }), true);
      assert.equal(decide(store, account.id, 'hold_e', 6_000), true, 'a release gives back what it kept');
      assert.equal(decide(store, 'acct_missing', 'hold_f', 0), false, 'no such account');
    }));

  test('released, writes the hold already released and both ledger rows, the balance as it was', () =>
    withHoldsInMemory(async (store) => {
      const account = await createAccount(store, { name: 'a', creditMicros: 10_000 });
      decide(store, account.id, 'hold_a', 4_000);
      assert.equal(await store.hotLedger!.release({ holdId: 'hold_a', note: 'upstream failed', now: 1 }), true);
      assert.deepEqual(committedRows(account.id, 'hold_a'), {
        hold: { state: 'released', amount_micros: 4_000, charged_micros: null },
        kinds: ['credit', 'hold', 'release'],
      });
      assert.equal(otherConnectionBalance(account.id), 10_000);
      assert.equal((await checkAccountBalance(store, account.id)).consistent, true);
      assert.equal((await store.hotLedger!.settle(settleOf('hold_a'))).kind, 'not-open', 'ended once');
    }));

  test('released while the store refuses writes, ends with nothing written and nothing lost', () =>
    withHoldsInMemory(async (store) => {
      const account = await createAccount(store, { name: 'a', creditMicros: 10_000 });
      decide(store, account.id, 'hold_a', 4_000);
      store.failWrites!('SQLITE_FULL');
      const released = await store.hotLedger!.release({ holdId: 'hold_a', note: null, now: 1 });
      store.failWrites!(null);
      assert.equal(released, true);
      assert.deepEqual(committedRows(account.id, 'hold_a'), { hold: undefined, kinds: ['credit'] });
      assert.equal(decide(store, account.id, 'hold_b', 10_000), true, 'nothing is kept for it');
    }));

  test("is written before any statement of Kysely's, which sees it held, and is then settled as any hold", () =>
    withHoldsInMemory(async (store) => {
      const account = await createAccount(store, { name: 'a', creditMicros: 10_000 });
      decide(store, account.id, 'hold_a', 4_000);
      const seen = await findAccount(store.db, account.id);
      assert.deepEqual([seen?.balance_micros, seen?.held_micros], [6_000, 4_000]);
      assert.deepEqual(committedRows(account.id, 'hold_a').hold, { state: 'open', amount_micros: 4_000, charged_micros: null });
      assert.equal((await settleHold(store, 'hold_a', { chargeMicros: 1_000, units: { call: 1 } })).applied, true);
      assert.deepEqual(committedRows(account.id, 'hold_a').kinds, ['credit', 'hold', 'settle']);
      assert.equal((await checkAccountBalance(store, account.id)).consistent, true);
    }));

  test("stays unwritten through a read of Kysely's that touches none of the ledger's tables (the pollers')", () =>
    withHoldsInMemory(async (store) => {
      const account = await createAccount(store, { name: 'a', creditMicros: 10_000 });
      decide(store, account.id, 'hold_a', 4_000);
      await store.db.selectFrom('webhook_outbox').select('id').where('state', '=', 'pending').execute();
      await store.db.selectFrom('tasks').select('id').execute();
      assert.equal(committedRows(account.id, 'hold_a').hold, undefined);
      await store.db.selectFrom('holds').select('id').where('state', '=', 'open').execute();
      assert.deepEqual(committedRows(account.id, 'hold_a').hold, { state: 'open', amount_micros: 4_000, charged_micros: null }, 'a read of holds sees it');
    }));

  test("is written before a write of Kysely's, whatever its table", () =>
    withHoldsInMemory(async (store) => {
      const account = await createAccount(store, { name: 'a', creditMicros: 10_000 });
      decide(store, account.id, 'hold_a', 4_000);
      await store.db.updateTable('tasks').set({ status: 'failed' }).where('id', '=', 'no_such_task').execute();
      assert.deepEqual(committedRows(account.id, 'hold_a').hold, { state: 'open', amount_micros: 4_000, charged_micros: null });
    }));

  test('still unwritten after maxUnwrittenHoldMs, is written by the timer', () =>
    withHoldsInMemory(async (store) => {
      const account = await createAccount(store, { name: 'a', creditMicros: 10_000 });
      decide(store, account.id, 'hold_a', 4_000);
      await sleep(5);
      assert.equal(otherConnectionBalance(account.id), 10_000, 'too young');
      await sleep(80);
      assert.equal(otherConnectionBalance(account.id), 6_000);
      assert.equal((await store.hotLedger!.settle(settleOf('hold_a'))).kind, 'applied');
      assert.equal(otherConnectionBalance(account.id), 9_900);
    }, 20));

  test('asked to be written (a stream, before its first byte) is written in the next batch, committed when the promise resolves', () =>
    withHoldsInMemory(async (store) => {
      const account = await createAccount(store, { name: 'a', creditMicros: 10_000 });
      decide(store, account.id, 'hold_a', 4_000);
      const written = store.hotLedger!.writeHold!('hold_a');
      assert.equal(writeLockTakenBy(storeFile()), false, 'written in the next batch, after what the caller does in this turn');
      await written;
      assert.equal(otherConnectionBalance(account.id), 6_000);
      await store.hotLedger!.writeHold!('hold_a'); // written already: nothing more
      assert.equal(otherConnectionBalance(account.id), 6_000);
    }));

  test('settled while its own write is on its way is settled after that write commits, in a batch of its own', () =>
    withHoldsInMemory(async (store) => {
      const account = await createAccount(store, { name: 'a', creditMicros: 10_000 });
      decide(store, account.id, 'hold_a', 4_000);
      const written = store.hotLedger!.writeHold!('hold_a');
      const settled = store.hotLedger!.settle({ ...settleOf('hold_a'), chargeMicros: 1_500 });
      await written;
      assert.deepEqual(committedRows(account.id, 'hold_a').kinds, ['credit', 'hold'], 'the settle waits for the hold to be committed');
      assert.deepEqual(await settled, { kind: 'applied', chargedMicros: 1_500, unbilledMicros: 0 });
      assert.equal(otherConnectionBalance(account.id), 8_500);
    }));

  test('whose own write the store refuses has nothing to end: a settle or release asked for meanwhile is not kept for a retry', () =>
    withHoldsInMemory(async (store) => {
      const account = await createAccount(store, { name: 'a', creditMicros: 10_000 });
      decide(store, account.id, 'hold_a', 4_000);
      decide(store, account.id, 'hold_b', 1_000);
      const writes = [store.hotLedger!.writeHold!('hold_a'), store.hotLedger!.writeHold!('hold_b')].map((write) => write.catch((error) => error));
      // Asked for before the batch with the writes runs: they would have failed in it, as store errors, and been kept.
      const settled = store.hotLedger!.settle(settleOf('hold_a')).catch((error) => error);
      const released = store.hotLedger!.release({ holdId: 'hold_b', note: null, now: 1 });
      store.failWrites!('SQLITE_FULL');
      const [refusedWrite] = await Promise.all(writes);
      store.failWrites!(null);
      assert.ok(refusedWrite instanceof UnwrittenHoldError);
      const refusedSettle = await settled;
      assert.ok(refusedSettle instanceof UnwrittenHoldError, 'the settle hears that the hold was never written');
      assert.equal((refusedSettle.cause as { code?: string }).code, 'SQLITE_FULL');
      assert.equal(await released, true);
      assert.deepEqual(committedRows(account.id, 'hold_a'), { hold: undefined, kinds: ['credit'] });
      assert.equal(decide(store, account.id, 'hold_c', 10_000), true, 'the whole balance is free again');
    }));

  test('whose balance another writer spends before its settle is not written: the settle rejects and nothing is charged', () =>
    withHoldsInMemory(async (store) => {
      const account = await createAccount(store, { name: 'a', creditMicros: 10_000 });
      decide(store, account.id, 'hold_a', 4_000);
      moveBalanceElsewhere(account.id, -9_000, 'debit'); // another writer (the CLI, a second process)
      const refused = await store.hotLedger!.settle(settleOf('hold_a')).catch((error) => error);
      assert.ok(refused instanceof UnwrittenHoldError);
      assert.equal(refused.cause, undefined, 'the balance, not the store');
      assert.deepEqual(committedRows(account.id, 'hold_a'), { hold: undefined, kinds: ['credit', 'debit'] });
      assert.equal((await checkAccountBalance(store, account.id)).consistent, true);
      assert.equal(decide(store, account.id, 'hold_b', 1_000), true, 'what it kept is given back');
    }));

  test('whose settle a failing store refuses is not written: the settle rejects with the store error, and nothing is held', () =>
    withHoldsInMemory(async (store) => {
      const account = await createAccount(store, { name: 'a', creditMicros: 10_000 });
      decide(store, account.id, 'hold_a', 4_000);
      store.failWrites!('SQLITE_FULL');
      const refused = await store.hotLedger!.settle(settleOf('hold_a')).catch((error) => error);
      store.failWrites!(null);
      assert.ok(refused instanceof UnwrittenHoldError);
      assert.equal((refused.cause as { code?: string }).code, 'SQLITE_FULL');
      assert.deepEqual(committedRows(account.id, 'hold_a'), { hold: undefined, kinds: ['credit'] });
      assert.equal(decide(store, account.id, 'hold_b', 10_000), true, 'the whole balance is free again');
    }));

  test('that the timer cannot write makes its settle reject with why, and its release write nothing', () =>
    withHoldsInMemory(async (store) => {
      const account = await createAccount(store, { name: 'a', creditMicros: 10_000 });
      decide(store, account.id, 'hold_a', 4_000);
      decide(store, account.id, 'hold_b', 1_000);
      store.failWrites!('SQLITE_FULL');
      await sleep(80);
      store.failWrites!(null);
      const refused = await store.hotLedger!.settle(settleOf('hold_a')).catch((error) => error);
      assert.equal((refused.cause as { code?: string }).code, 'SQLITE_FULL');
      assert.equal(await store.hotLedger!.release({ holdId: 'hold_b', note: null, now: 1 }), true);
      assert.deepEqual(committedRows(account.id, 'hold_a'), { hold: undefined, kinds: ['credit'] });
      assert.equal(otherConnectionBalance(account.id), 10_000);
    }, 20));

  test('charged past its amount takes the overdraft exactly as a hold written first would', () =>
    withHoldsInMemory(async (store) => {
      const deferred = await createAccount(store, { name: 'a', creditMicros: 1_000, overdraftMicros: 500 });
      const written = await createAccount(store, { name: 'b', creditMicros: 1_000, overdraftMicros: 500 });
      decide(store, deferred.id, 'hold_a', 800);
      const { holdId } = await holdFunds(store, { accountId: written.id, amountMicros: 800, requestId: 'r', model: 'm', endpoint: 'chat' });
      const charge = { chargeMicros: 2_000, units: { call: 1 } };
      const outcomes = [await settleHold(store, 'hold_a', charge), await settleHold(store, holdId, charge)];
      assert.deepEqual(outcomes[0], outcomes[1]);
      assert.deepEqual(outcomes[0], { applied: true, chargedMicros: 1_300, unbilledMicros: 700 });
      const balances = await Promise.all([deferred.id, written.id].map((id) => findAccount(store.db, id).then((a) => a?.balance_micros)));
      assert.deepEqual(balances, [-300, -300]);
    }));

  test('many at once on one account, settled and released in any order among holds written at once and reads of Kysely, leave it exact and never below zero', () =>
    withStore(async (store) => {
      const account = await createAccount(store, { name: 'a', creditMicros: 50_000 });
      let holds = 0;
      const calls = Array.from({ length: 200 }, async (_, i) => {
        const holdId = `hold_${i}`;
        const held = i % 5 === 0 ? await store.hotLedger!.hold(hotHold(account.id, holdId, 1_000)) : decide(store, account.id, holdId, 1_000);
        if (!held) return 'refused';
        holds += 1;
        await sleep(i % 7);
        if (i % 11 === 0) await findAccount(store.db, account.id);
        if (i % 3 === 0) return (await store.hotLedger!.release({ holdId, note: null, now: 1 })) ? 'released' : 'lost';
        return (await store.hotLedger!.settle({ ...settleOf(holdId), usageId: `use_${i}`, chargeMicros: 700 })).kind;
      });
      const outcomes = await Promise.all(calls);
      assert.ok(!outcomes.includes('lost'));
      const settled = outcomes.filter((o) => o === 'applied').length;
      const after = await findAccount(store.db, account.id);
      assert.deepEqual([after?.balance_micros, after?.held_micros], [50_000 - settled * 700, 0]);
      assert.equal((await checkAccountBalance(store, account.id)).consistent, true);
      assert.ok(holds >= 50 && outcomes.includes('refused'), 'the balance ran out along the way');
    }));
});
