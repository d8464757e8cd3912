// When answered settles are written into the store (answered-settles.ts), with a journal and a store
// that only record what they are given: one journal write for a turn's settles; a lone call's queue
// written in its upstream's shadow once a few are queued; under load, a bulk at a time or the timer.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { answeredSettles, BULK_BATCH, SHADOW_BATCH } from '../../src/store/hot-ledger/answered-settles.js';
import type { DeferredHold } from '../../src/store/hot-ledger/deferred-holds.js';
import type { JournalRecord, SettleJournal } from '../../src/store/hot-ledger/settle-journal.js';
import { hotHold, settleOf } from './hot-ledger-sqlite-fixture.js';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/** answeredSettles over a journal that keeps its writes and a store that keeps its transactions; no timer within the test. */
function recorded({ inFlight = 1, journalTakes = true } = {}) {
  const journalWrites: JournalRecord[][] = [];
  const file = { full: false, emptied: 0, journaledHoldsWritten: true, journaledHoldWrites: 0 };
  const transactions: string[][] = [];
  let open: string[] | undefined;
  const given: string[] = [];
  const journal: SettleJournal = {
    appendAll: (records) => (journalTakes ? journalWrites.push(records) > 0 : false),
    records: () => [],
    get full() {
      return file.full;
    },
    written: () => {
      if (!file.full) return;
      file.emptied += 1;
      file.full = false;
    },
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
    writeJournaledHolds: () => {
      file.journaledHoldWrites += 1;
      return file.journaledHoldsWritten;
    },
    holdsInFlight: () => state.inFlight,
    writeWithinMs: 60_000,
  });
  const heldOf = (id: string): DeferredHold => ({ entry: hotHold('acct_a', id, 100), decidedAt: 0, returned: false, journaled: false });
  const add = (id: string) => settles.add(heldOf(id), settleOf(id));
  return { settles, add, heldOf, journalWrites, transactions, given, state, file };
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

test("a stream's hold goes to the journal with the turn's settles, is marked journaled, and is never queued for the store", async () => {
  const { settles, add, heldOf, journalWrites, transactions } = recorded();
  const stream = heldOf('hold_stream');
  const answers = [settles.journalHold(stream), add('hold_1')];
  assert.equal(stream.journaled, false, 'not before its line is in the file');
  assert.deepEqual(await Promise.all(answers), [true, true]);
  assert.equal(stream.journaled, true);
  assert.deepEqual(
    journalWrites.map((records) => records.map((r) => [r.hold.holdId, r.settle !== undefined])),
    [
      [
        ['hold_stream', false],
        ['hold_1', true],
      ],
    ],
  );
  settles.writeNow();
  assert.deepEqual(transactions, [['hold_1']], 'the hold waits for its settle, or the ledger writes it');
  settles.close();
});

test("a stream's hold the journal cannot take is answered false and not marked journaled", async () => {
  const { settles, heldOf } = recorded({ journalTakes: false });
  const stream = heldOf('hold_stream');
  assert.equal(await settles.journalHold(stream), false);
  assert.equal(stream.journaled, false);
  settles.close();
});

test('a full journal is emptied only once the store has the journaled holds still unwritten', async () => {
  const { settles, add, file } = recorded();
  file.full = true;
  file.journaledHoldsWritten = false; // the store refused them: the file keeps them
  await add('hold_1');
  settles.writeNow();
  assert.ok(file.journaledHoldWrites >= 1, 'the holds were asked for');
  assert.equal(file.emptied, 0);
  file.journaledHoldsWritten = true;
  await add('hold_2');
  settles.writeNow();
  assert.equal(file.emptied, 1);
  settles.close();
});

test("a full journal that took only streams' holds is emptied after the turn, the holds written first", async () => {
  const { settles, heldOf, file, transactions } = recorded();
  file.full = true;
  assert.equal(await settles.journalHold(heldOf('hold_stream')), true);
  await nextTurn();
  assert.deepEqual([file.journaledHoldWrites, file.emptied], [1, 1]);
  assert.deepEqual(transactions, [], 'no settle to write');
  settles.close();
});
