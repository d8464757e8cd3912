// With a settle journal (the serving gateway's store), a stream's hold decided in memory is made
// durable before its first byte by a line in the journal, not by a commit of its own, and written
// into the store with its settle: one step. A restart ends a journaled hold its run never settled;
// a store that refuses its write keeps it for its settle, whose answer has gone out.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { checkAccountBalance, createAccount } from '../../src/billing/accounts.js';
import { UnwrittenHoldError } from '../../src/store/hot-ledger/types.js';
import { openStore, type Store } from '../../src/store/open.js';
import { freshStore, hotHold, moveBalanceElsewhere, otherConnectionBalance, readCommitted, settleOf, storeFile } from './hot-ledger-sqlite-fixture.js';

const journalLines = (path: string) => readFileSync(path, 'utf8').split('\n').filter(Boolean);
const ledgerKinds = (holdId: string) =>
  readCommitted((other) => other.prepare('select kind from ledger where hold_id = ? order by id').pluck().all(holdId) as string[]);
const committedHold = (holdId: string) =>
  readCommitted((other) => other.prepare('select state, charged_micros from holds where id = ?').get(holdId)) as
    | { state: string; charged_micros: number | null }
    | undefined;

const openWithJournal = (journal: string, maxUnwrittenHoldMs = 60_000) =>
  openStore(`sqlite:${storeFile()}`, { settleJournal: journal, maxUnwrittenHoldMs, answeredSettleWriteWithinMs: 60_000 });

/** A store with a settle journal and an account of 10 000 micros, whose stream hold `hold_s` (4 000) was asked to be written. */
async function withJournaledStreamHold(run: (s: { store: Store; accountId: string; journal: string }) => Promise<void>, maxUnwrittenHoldMs?: number) {
  await (await freshStore()).close();
  const journal = `${storeFile()}-answered.jsonl`;
  const store = await openWithJournal(journal, maxUnwrittenHoldMs);
  try {
    const { id } = await createAccount(store, { name: 'a', creditMicros: 10_000 });
    assert.equal(store.hotLedger!.holdAtOnce!(hotHold(id, 'hold_s', 4_000)), true);
    await store.hotLedger!.writeHold!('hold_s');
    await run({ store, accountId: id, journal });
  } finally {
    await store.close();
  }
}

describe("a stream's hold decided in memory, with a settle journal", () => {
  test('is in the journal, not the store, once its write resolves', () =>
    withJournaledStreamHold(async ({ accountId, journal }) => {
      assert.equal(journalLines(journal).length, 1);
      assert.equal(committedHold('hold_s'), undefined);
      assert.equal(otherConnectionBalance(accountId), 10_000);
    }));

  test('keeps its amount from the next decisions while it is only in the journal', () =>
    withJournaledStreamHold(async ({ store, accountId }) => {
      assert.equal(store.hotLedger!.holdAtOnce!(hotHold(accountId, 'hold_b', 7_000)), false);
      assert.equal(store.hotLedger!.holdAtOnce!(hotHold(accountId, 'hold_c', 6_000)), true);
    }));

  test('is written with its settle in one step, its settle answered from the journal', () =>
    withJournaledStreamHold(async ({ store, accountId, journal }) => {
      const settled = await store.hotLedger!.settle({ ...settleOf('hold_s'), chargeMicros: 1_500 });
      assert.deepEqual(settled, { kind: 'applied', chargedMicros: 1_500, unbilledMicros: 0 });
      assert.equal(journalLines(journal).length, 2);
      store.hotLedger!.close!();
      assert.deepEqual(committedHold('hold_s'), { state: 'settled', charged_micros: 1_500 });
      assert.deepEqual(ledgerKinds('hold_s'), ['hold', 'settle']);
      assert.equal(otherConnectionBalance(accountId), 8_500);
    }));

  test("is written alone, open, before a statement of Kysely's (its progress goes on its row)", () =>
    withJournaledStreamHold(async ({ store, accountId }) => {
      await store.db.updateTable('holds').set({ progress: '{}' }).where('id', '=', 'hold_s').execute();
      assert.deepEqual(committedHold('hold_s'), { state: 'open', charged_micros: null });
      assert.equal(otherConnectionBalance(accountId), 6_000);
      assert.equal((await store.hotLedger!.settle({ ...settleOf('hold_s'), chargeMicros: 1_000 })).kind, 'applied');
      assert.equal(otherConnectionBalance(accountId), 9_000);
    }));

  test('is written as one asked for twice: the second write resolves without a second line', () =>
    withJournaledStreamHold(async ({ store, journal }) => {
      await store.hotLedger!.writeHold!('hold_s');
      assert.equal(journalLines(journal).length, 1);
      assert.equal(committedHold('hold_s'), undefined);
    }));

  test('whose write a failing store refuses stays pending, and its settle writes it once the store takes writes again', () =>
    withJournaledStreamHold(async ({ store, accountId }) => {
      store.failWrites!('SQLITE_FULL');
      await assert.rejects(store.db.updateTable('holds').set({ progress: '{}' }).where('id', '=', 'hold_s').execute());
      store.failWrites!(null);
      assert.equal(committedHold('hold_s'), undefined);
      assert.equal((await store.hotLedger!.settle({ ...settleOf('hold_s'), chargeMicros: 1_000 })).kind, 'applied');
      store.hotLedger!.close!();
      assert.deepEqual(committedHold('hold_s'), { state: 'settled', charged_micros: 1_000 });
      assert.equal(otherConnectionBalance(accountId), 9_000);
    }));

  test('whose settle a failing store refuses stays pending: the settle rejects with the store error, to be retried, and lands once the store takes writes', () =>
    withJournaledStreamHold(async ({ store, accountId }) => {
      // Past the hold: not answered from the journal, so committed before its answer.
      const beyond = { ...settleOf('hold_s'), chargeMicros: 5_000 };
      store.failWrites!('SQLITE_FULL');
      const refused = await store.hotLedger!.settle(beyond).catch((error) => error);
      store.failWrites!(null);
      assert.ok(!(refused instanceof UnwrittenHoldError), 'not "never held": its stream went out');
      assert.equal((refused as { code?: string }).code, 'SQLITE_FULL');
      assert.equal(store.hotLedger!.holdAtOnce!(hotHold(accountId, 'hold_b', 6_001)), false, 'still reserved');
      assert.equal((await store.hotLedger!.settle(beyond)).kind, 'applied');
      assert.equal(committedHold('hold_s')?.state, 'settled');
      assert.equal((await checkAccountBalance(store, accountId)).consistent, true);
    }));

  test('whose balance another process spends is still settled, charged what the balance has left', () =>
    withJournaledStreamHold(async ({ store, accountId }) => {
      moveBalanceElsewhere(accountId, -9_000, 'debit');
      const settled = await store.hotLedger!.settle({ ...settleOf('hold_s'), chargeMicros: 3_000 });
      assert.equal(settled.kind, 'applied', 'its stream went out: the settle is not refused');
      store.hotLedger!.close!();
      assert.deepEqual(committedHold('hold_s'), { state: 'settled', charged_micros: 1_000 });
      assert.equal(otherConnectionBalance(accountId), 0);
      assert.equal((await checkAccountBalance(store, accountId)).consistent, true);
    }));

  test('that its run never settled is ended by the restart: held and released, nothing charged', () =>
    withJournaledStreamHold(async ({ accountId, journal }) => {
      // A second opening stands for the restart after a crash: the first never wrote it.
      const restarted = await openWithJournal(journal);
      try {
        assert.deepEqual(committedHold('hold_s'), { state: 'released', charged_micros: null });
        assert.deepEqual(ledgerKinds('hold_s'), ['hold', 'release']);
        assert.equal(otherConnectionBalance(accountId), 10_000);
        assert.equal((await checkAccountBalance(restarted, accountId)).consistent, true);
      } finally {
        await restarted.close();
      }
    }));

  test('that its run settled through the journal is settled once by the restart, not released', () =>
    withJournaledStreamHold(async ({ store, accountId, journal }) => {
      await store.hotLedger!.settle({ ...settleOf('hold_s'), chargeMicros: 2_000 });
      const restarted = await openWithJournal(journal);
      try {
        assert.deepEqual(committedHold('hold_s'), { state: 'settled', charged_micros: 2_000 });
        assert.deepEqual(ledgerKinds('hold_s'), ['hold', 'settle']);
        assert.equal(otherConnectionBalance(accountId), 8_000);
      } finally {
        await restarted.close();
      }
    }));

  test('that the store had already (written open by its age) is left to the recovery sweep by the restart', () =>
    withJournaledStreamHold(async ({ accountId, journal }) => {
      await new Promise((resolve) => setTimeout(resolve, 80));
      assert.deepEqual(committedHold('hold_s'), { state: 'open', charged_micros: null }, 'written by the timer');
      const restarted = await openWithJournal(journal);
      try {
        assert.deepEqual(committedHold('hold_s'), { state: 'open', charged_micros: null });
        assert.deepEqual(ledgerKinds('hold_s'), ['hold']);
        assert.equal(otherConnectionBalance(accountId), 6_000);
      } finally {
        await restarted.close();
      }
    }, 20));
});

test("a stream's hold the journal no longer takes (closed) is written alone, committed before its write resolves", async () => {
  await (await freshStore()).close();
  const store = await openWithJournal(`${storeFile()}-answered.jsonl`);
  try {
    const { id } = await createAccount(store, { name: 'a', creditMicros: 10_000 });
    assert.equal(store.hotLedger!.holdAtOnce!(hotHold(id, 'hold_s', 4_000)), true);
    store.hotLedger!.close!();
    await store.hotLedger!.writeHold!('hold_s');
    assert.deepEqual(committedHold('hold_s'), { state: 'open', charged_micros: null });
    assert.equal(otherConnectionBalance(id), 6_000);
  } finally {
    await store.close();
  }
});
