// When answered settles are written into the store (answered-settles.ts), with a journal and a store
// that only record what they are given: one journal write for a turn's settles; a lone call's queue
// written in its upstream's shadow once a few are queued; under load, a bulk at a time or the timer.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { answeredSettles, BULK_BATCH, SHADOW_BATCH } from '../../src/store/hot-ledger/answered-settles.js';
import type { DeferredHold } from '../../src/store/hot-ledger/deferred-holds.js';
import type { AnsweredSettle, SettleJournal } from '../../src/store/hot-ledger/settle-journal.js';
import { hotHold, settleOf } from './hot-ledger-sqlite-fixture.js';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/** answeredSettles over a journal that keeps its writes and a store that keeps its transactions; no timer within the test. */
function recorded({ inFlight = 1, journalTakes = true } = {}) {
  const journalWrites: AnsweredSettle[][] = [];
  const transactions: string[][] = [];
  let open: string[] | undefined;
  const given: string[] = [];
  const journal: SettleJournal = {
    appendAll: (records) => (journalTakes ? journalWrites.push(records) > 0 : false),
    records: () => [],
    written: () => {},
    clear: () => {},
    close: () => {},
  };
  const state = { inFlight };
  const settles = answeredSettles({
    journal,
    writeNow(run) {
      open = [];
      run();
      transactions.push(open);
      open = undefined;
    },
    inForeignTransaction: () => false,
    write: (record) => open!.push(record.hold.holdId),
    giveBack: (held) => given.push(held.entry.holdId),
    holdsInFlight: () => state.inFlight,
    writeWithinMs: 60_000,
  });
  const add = (id: string) => {
    const held: DeferredHold = { entry: hotHold('acct_a', id, 100), decidedAt: 0, returned: false };
    return settles.add(held, settleOf(id));
  };
  return { settles, add, journalWrites, transactions, given, state };
}

test("a turn's settles go to the journal in one write, and each is answered once it landed", async () => {
  const { settles, add, journalWrites } = recorded();
  const answers = ['hold_1', 'hold_2', 'hold_3'].map(add);
  assert.equal(journalWrites.length, 0, 'not before the turn ends');
  assert.deepEqual(await Promise.all(answers), [true, true, true]);
  assert.deepEqual(
    journalWrites.map((records) => records.map((r) => r.hold.holdId)),
    [['hold_1', 'hold_2', 'hold_3']],
  );
  assert.equal(settles.size, 3);
  settles.close();
});

test('a settle the journal cannot take is answered false, and not queued for the store', async () => {
  const { settles, add, transactions } = recorded({ journalTakes: false });
  assert.equal(await add('hold_1'), false);
  assert.equal(settles.size, 0);
  settles.writeNow();
  assert.deepEqual(transactions, []);
});

test("a lone call's upstream request writes the queue in its shadow once a few are queued, in one transaction", async () => {
  const { settles, add, transactions, given } = recorded({ inFlight: 1 });
  const ids = Array.from({ length: SHADOW_BATCH }, (_, i) => `hold_${i}`);
  for (const id of ids.slice(0, -1)) await add(id);
  settles.writeSoon();
  await nextTurn();
  assert.deepEqual(transactions, [], 'fewer than a batch: left for the timer');
  await add(ids.at(-1)!);
  settles.writeSoon();
  assert.deepEqual(transactions, [], 'not in the turn of the upstream request');
  await nextTurn();
  assert.deepEqual(transactions, [ids]);
  assert.deepEqual(given, ids, 'their reservations given back');
  assert.equal(settles.size, 0);
  settles.close();
});

test("with other calls in flight, a later call's upstream request leaves a few queued settles for a bulk or the timer", async () => {
  const { settles, add, transactions } = recorded({ inFlight: 2 });
  for (let i = 0; i < SHADOW_BATCH * 2; i++) await add(`hold_${i}`);
  settles.writeSoon();
  await nextTurn();
  assert.deepEqual(transactions, []);
  settles.close();
  assert.equal(transactions.length, 1, 'written at close');
});

test('once a bulk is queued, it is written in one transaction after the turn that queued it', async () => {
  const { settles, add, transactions, state } = recorded();
  state.inFlight = BULK_BATCH;
  const ids = Array.from({ length: BULK_BATCH }, (_, i) => `hold_${i}`);
  await Promise.all(ids.map(add));
  assert.deepEqual(transactions, []);
  await nextTurn();
  assert.deepEqual(transactions, [ids]);
  settles.close();
});

test('written now (before a statement of Kysely reads the store), the settles still waiting for their journal write go too', async () => {
  const { settles, add, journalWrites, transactions } = recorded();
  const answer = add('hold_1');
  settles.writeNow();
  assert.equal(journalWrites.length, 1, 'journaled first');
  assert.deepEqual(transactions, [['hold_1']]);
  assert.equal(await answer, true);
  settles.close();
});

test('after close, a settle is not taken (it is committed before its answer instead)', () => {
  const { settles, add } = recorded();
  settles.close();
  assert.equal(add('hold_1'), undefined);
});
