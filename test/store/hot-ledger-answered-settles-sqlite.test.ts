// With a settle journal (the serving gateway's store), the settle of a hold decided in memory is
// answered once it is in the journal, and written into the store in the shadow of a later call's
// upstream request, by a timer, or before anything else reads the store. A restart writes what the
// journal still holds, once; a store that refuses keeps it for later; a journal that cannot take it
// leaves the settle committed before its answer, as without one.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, test } from 'node:test';
import { checkAccountBalance, createAccount } from '../../src/billing/accounts.js';
import { findAccount } from '../../src/store/accounts.js';
import { BULK_BATCH, SHADOW_BATCH } from '../../src/store/hot-ledger/answered-settles.js';
import { settleJournal } from '../../src/store/hot-ledger/settle-journal.js';
import { type HotLedgerLog, UnwrittenHoldError } from '../../src/store/hot-ledger/types.js';
import type { Store } from '../../src/store/open.js';
import { openStore } from '../../src/store/open.js';
import {
  freshStore,
  hotHold,
  moveBalanceElsewhere,
  otherConnectionBalance,
  readCommitted,
  recordingLog,
  settleOf,
  storeFile,
} from './hot-ledger-sqlite-fixture.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const journalLines = (path: string) => readFileSync(path, 'utf8').split('\n').filter(Boolean).length;

/** The hold's row as a second connection sees it (undefined: not in the store). */
const committedHold = (holdId: string) => readCommitted((other) => other.prepare('select state, charged_micros from holds where id = ?').get(holdId));

/** Answers `count` more lone settles from the journal (holds hold_1…, 100 micros each, charged in full). */
async function answerLoneSettles(store: Store, accountId: string, count: number) {
  for (let i = 1; i <= count; i++) {
    assert.equal(store.hotLedger!.holdAtOnce!(hotHold(accountId, `hold_${i}`, 100)), true);
    await store.hotLedger!.settle({ ...settleOf(`hold_${i}`), usageId: `use_${i}` });
  }
}

/** Opens the store again with `journal`, as the restart after a crash does, checks it, and closes it. */
async function afterRestart(journal: string, check: () => void) {
  const restarted = await openStore(`sqlite:${storeFile()}`, { settleJournal: journal });
  try {
    check();
  } finally {
    await restarted.close();
  }
}

/**
 * A store with a settle journal beside its file, an account of 10 000 micros, and a settle answered
 * already (4 000 held, 2 500 charged). Its timer writes the journal's settles within 20 ms unless
 * `writeWithinMs` says otherwise: a test of what happens before the timer lengthens it, since a slow
 * machine can take 20 ms to answer a few settles.
 */
async function withAnsweredSettle(
  run: (s: { store: Store; accountId: string; journal: string }) => Promise<void>,
  { log, writeWithinMs }: { log?: HotLedgerLog; writeWithinMs?: number } = {},
) {
  const store = await freshStore('', { maxUnwrittenHoldMs: 60_000 });
  await store.close();
  const journal = `${storeFile()}-answered.jsonl`;
  const opened = await openStore(`sqlite:${storeFile()}`, {
    settleJournal: journal,
    maxUnwrittenHoldMs: 60_000,
    answeredSettleWriteWithinMs: writeWithinMs,
    log,
  });
  try {
    const { id } = await createAccount(opened, { name: 'a', creditMicros: 10_000 });
    assert.equal(opened.hotLedger!.holdAtOnce!(hotHold(id, 'hold_a', 4_000)), true);
    const settled = await opened.hotLedger!.settle({ ...settleOf('hold_a'), chargeMicros: 2_500 });
    assert.deepEqual(settled, { kind: 'applied', chargedMicros: 2_500, unbilledMicros: 0 });
    await run({ store: opened, accountId: id, journal });
  } finally {
    await opened.close();
  }
}

describe('a settle answered before the store has it', () => {
  test('is in the journal, not the store, when its answer may go out', () =>
    withAnsweredSettle(async ({ accountId, journal }) => {
      assert.equal(journalLines(journal), 1);
      assert.equal(committedHold('hold_a'), undefined);
      assert.equal(otherConnectionBalance(accountId), 10_000);
    }));

  test("is written, with the others queued, right after a later call's upstream request goes out once a batch is queued", () =>
    withAnsweredSettle(
      async ({ store, accountId, journal }) => {
        await answerLoneSettles(store, accountId, SHADOW_BATCH - 1); // with hold_a: a batch
        store.hotLedger!.upstreamRequestSent!();
        assert.equal(committedHold('hold_a'), undefined, 'not in the turn of the upstream request');
        await new Promise((resolve) => setImmediate(resolve));
        assert.deepEqual(committedHold('hold_a'), { state: 'settled', charged_micros: 2_500 });
        assert.deepEqual(committedHold(`hold_${SHADOW_BATCH - 1}`), { state: 'settled', charged_micros: 100 });
        assert.equal(otherConnectionBalance(accountId), 10_000 - 2_500 - 100 * (SHADOW_BATCH - 1));
        assert.equal(journalLines(journal), SHADOW_BATCH, 'kept until the file grows (a restart skips them by their hold rows)');
      },
      { writeWithinMs: 60_000 },
    ));

  test("waits for the timer when fewer than a batch are queued at a later call's upstream request", () =>
    withAnsweredSettle(
      async ({ store, accountId }) => {
        await answerLoneSettles(store, accountId, SHADOW_BATCH - 2);
        store.hotLedger!.upstreamRequestSent!();
        await new Promise((resolve) => setImmediate(resolve));
        assert.equal(committedHold('hold_a'), undefined, 'one commit for several: not yet');
        await sleep(700);
        assert.deepEqual(committedHold(`hold_${SHADOW_BATCH - 2}`), { state: 'settled', charged_micros: 100 });
      },
      { writeWithinMs: 500 },
    ));

  test('is written by the timer when no call comes', () =>
    withAnsweredSettle(async () => {
      await sleep(60);
      assert.deepEqual(committedHold('hold_a'), { state: 'settled', charged_micros: 2_500 });
    }));

  test("is written before a statement of Kysely's reads the store", () =>
    withAnsweredSettle(async ({ store, accountId }) => {
      const account = await findAccount(store.db, accountId);
      assert.deepEqual([account?.balance_micros, account?.held_micros], [7_500, 0]);
    }));

  test('keeps its amount reserved until it is written: a decision that fits beside it leaves it unwritten', () =>
    withAnsweredSettle(async ({ store, accountId }) => {
      assert.equal(store.hotLedger!.holdAtOnce!(hotHold(accountId, 'hold_c', 6_000)), true);
      assert.equal(committedHold('hold_a'), undefined);
    }));

  test('is written by the next process to open the store with the journal, exactly once', () =>
    withAnsweredSettle(async ({ store, accountId, journal }) => {
      // A second opening stands for the restart after a crash: the first never wrote it.
      await afterRestart(journal, () => {
        assert.deepEqual(committedHold('hold_a'), { state: 'settled', charged_micros: 2_500 });
        assert.equal(journalLines(journal), 0);
      });
      await sleep(60); // the first one's own write (its timer: one settle is less than a batch) finds it there
      assert.equal(otherConnectionBalance(accountId), 7_500, 'charged once');
      assert.equal(store.hotLedger!.holdAtOnce!(hotHold(accountId, 'hold_b', 1_000)), true);
      await store.hotLedger!.settle({ ...settleOf('hold_b'), usageId: 'use_b' });
      assert.equal(journalLines(journal), 1, 'and took it as written: the next settle is answered from the journal');
      const kinds = readCommitted((other) => other.prepare('select kind from ledger where hold_id = ? order by id').pluck().all('hold_a'));
      assert.deepEqual(kinds, ['hold', 'settle']);
    }));

  test('stays in the journal and is tried again when the store refuses it; meanwhile no other settle is answered before it is written', () =>
    withAnsweredSettle(async ({ store, accountId, journal }) => {
      assert.equal(store.hotLedger!.holdAtOnce!(hotHold(accountId, 'hold_b', 1_000)), true);
      store.failWrites!('SQLITE_FULL');
      await sleep(60); // the timer tries to write it
      assert.equal(committedHold('hold_a'), undefined);
      assert.equal(journalLines(journal), 1);
      await assert.rejects(store.hotLedger!.settle({ ...settleOf('hold_b'), usageId: 'use_b' }), UnwrittenHoldError);
      assert.equal(journalLines(journal), 1, 'hold_b was not journaled');
      store.failWrites!(null);
      await sleep(1_100);
      assert.deepEqual(committedHold('hold_a'), { state: 'settled', charged_micros: 2_500 });
      assert.equal(committedHold('hold_b'), undefined);
      assert.equal(otherConnectionBalance(accountId), 7_500);
    }));

  test('whose balance another process spent is charged what is left, the rest recorded unbilled, and the operator told', async () => {
    const recorded = recordingLog();
    await withAnsweredSettle(
      async ({ store, accountId }) => {
        assert.equal(store.hotLedger!.holdAtOnce!(hotHold(accountId, 'hold_b', 4_000)), true);
        moveBalanceElsewhere(accountId, -5_000); // 10 000 less hold_a's 2 500, less 5 000: 2 500 left
        const settled = await store.hotLedger!.settle({ ...settleOf('hold_b'), chargeMicros: 3_000, usageId: 'use_b' });
        assert.deepEqual(settled, { kind: 'applied', chargedMicros: 3_000, unbilledMicros: 0 }, 'answered as the hold allowed');
        store.hotLedger!.close!();
        assert.deepEqual(committedHold('hold_b'), { state: 'settled', charged_micros: 2_500 });
        assert.equal(otherConnectionBalance(accountId), 0);
        const usage = await store.db.selectFrom('usage_recent').select(['amount_micros', 'unbilled_micros', 'flags']).where('hold_id', '=', 'hold_b').execute();
        assert.deepEqual(usage, [{ amount_micros: 2_500, unbilled_micros: 500, flags: 'capped' }]);
        assert.equal((await checkAccountBalance(store, accountId)).consistent, true);
      },
      { log: recorded.log },
    );
    const warning = recorded.warnings.find((w) => w.msg.startsWith('another process spent the balance of a call already answered'));
    assert.deepEqual(warning?.obj, { holdId: 'hold_b', model: 'm', chargedMicros: 2_500, unbilledMicros: 500 });
  });

  test('is journaled with other calls in flight too: the settles of a turn in one write, each answered once it is there', () =>
    withAnsweredSettle(async ({ store, accountId, journal }) => {
      const ledger = store.hotLedger!;
      for (const id of ['hold_b', 'hold_c', 'hold_d']) assert.equal(ledger.holdAtOnce!(hotHold(accountId, id, 1_000)), true);
      const settles = ['hold_b', 'hold_c'].map((id) => ledger.settle({ ...settleOf(id), usageId: `use_${id}` }));
      assert.equal(journalLines(journal), 1, 'not before the turn ends');
      assert.deepEqual(
        await Promise.all(settles),
        [0, 0].map(() => ({ kind: 'applied', chargedMicros: 100, unbilledMicros: 0 })),
      );
      assert.equal(journalLines(journal), 3);
      assert.equal(committedHold('hold_b'), undefined);
      assert.equal(committedHold('hold_c'), undefined);
    }));

  test('once a bulk is queued, is written after that turn, without waiting for the timer', () =>
    withAnsweredSettle(
      async ({ store, accountId }) => {
        const ledger = store.hotLedger!;
        const ids = Array.from({ length: BULK_BATCH }, (_, i) => `hold_${i}`);
        for (const id of ids) assert.equal(ledger.holdAtOnce!(hotHold(accountId, id, 10)), true);
        await Promise.all(ids.map((id) => ledger.settle({ ...settleOf(id), chargeMicros: 10, usageId: `use_${id}` })));
        assert.equal(committedHold('hold_0'), undefined, 'answered from the journal');
        await new Promise((resolve) => setImmediate(resolve));
        assert.deepEqual(committedHold(`hold_${BULK_BATCH - 1}`), { state: 'settled', charged_micros: 10 });
        assert.equal(otherConnectionBalance(accountId), 10_000 - 2_500 - 10 * BULK_BATCH);
      },
      { writeWithinMs: 60_000 },
    ));

  test('is written before a decision its hold would refuse, which then reads what it charged', () =>
    withAnsweredSettle(async ({ store, accountId }) => {
      // 7 000 with hold_a's 4 000 reserved is more than the 10 000; with hold_a's 2 500 charged, it is covered.
      assert.equal(store.hotLedger!.holdAtOnce!(hotHold(accountId, 'hold_b', 7_000)), true);
      assert.deepEqual(committedHold('hold_a'), { state: 'settled', charged_micros: 2_500 });
      assert.equal(store.hotLedger!.holdAtOnce!(hotHold(accountId, 'hold_c', 1_000)), false, 'what is left (500) is still refused');
    }));

  test('is written when the ledger closes, before the store does', () =>
    withAnsweredSettle(async ({ store }) => {
      store.hotLedger!.close!();
      assert.deepEqual(committedHold('hold_a'), { state: 'settled', charged_micros: 2_500 });
    }));
});

test('a settle the journal cannot take is committed before it is answered, as without a journal', async () => {
  const store = await freshStore('', { settleJournal: '/dev/full', maxUnwrittenHoldMs: 60_000 });
  try {
    const { id } = await createAccount(store, { name: 'a', creditMicros: 10_000 });
    assert.equal(store.hotLedger!.holdAtOnce!(hotHold(id, 'hold_a', 4_000)), true);
    await store.hotLedger!.settle({ ...settleOf('hold_a'), chargeMicros: 2_500 });
    assert.deepEqual(committedHold('hold_a'), { state: 'settled', charged_micros: 2_500 });
  } finally {
    await store.close();
  }
});

test('a settle past its hold is committed before it is answered: its charge reads the account', () =>
  withAnsweredSettle(async ({ store, accountId }) => {
    assert.equal(store.hotLedger!.holdAtOnce!(hotHold(accountId, 'hold_b', 1_000)), true);
    const settled = await store.hotLedger!.settle({ ...settleOf('hold_b'), chargeMicros: 1_500, usageId: 'use_b' });
    assert.deepEqual(settled, { kind: 'applied', chargedMicros: 1_000, unbilledMicros: 500 });
    assert.deepEqual(committedHold('hold_b'), { state: 'settled', charged_micros: 1_000 });
  }));

test('a journal line of an earlier version (named objects) is still written at a restart', async () => {
  const store = await freshStore('', { maxUnwrittenHoldMs: 60_000 });
  const { id } = await createAccount(store, { name: 'a', creditMicros: 10_000 });
  await store.close();
  const journal = `${storeFile()}-answered.jsonl`;
  const record = { hold: hotHold(id, 'hold_old', 1_000), settle: { ...settleOf('hold_old'), chargeMicros: 700 } };
  writeFileSync(journal, `${JSON.stringify(record)}\n`);
  await afterRestart(journal, () => {
    assert.deepEqual(committedHold('hold_old'), { state: 'settled', charged_micros: 700 });
    assert.equal(otherConnectionBalance(id), 9_300);
  });
});

test('the settle journal is emptied once the store has all of it and it has grown past its limit', () => {
  const path = join(mkdtempSync(join(tmpdir(), 'tollroute-journal-')), 'answered.jsonl');
  const record = { hold: hotHold('acct_a', 'hold_a', 1), settle: settleOf('hold_a') };
  const probe = settleJournal(path);
  probe.appendAll([record]);
  probe.close();
  const lineBytes = statSync(path).size;
  truncateSync(path, 0);
  const journal = settleJournal(path, lineBytes * 2.5);
  try {
    assert.equal(journal.appendAll([record]), true);
    journal.written();
    assert.equal(journalLines(path), 1, 'under the limit: kept');
    assert.equal(journal.appendAll([record]), true);
    assert.equal(journal.appendAll([record]), true);
    journal.written();
    assert.equal(journalLines(path), 0);
    assert.equal(journal.appendAll([record]), true);
    const unknownChannel = { upstreamMs: null, channel: null, attempts: null, priceId: null }; // written as nulls
    assert.deepEqual(journal.records(), [{ ...record, settle: { ...record.settle, ...unknownChannel } }]);
  } finally {
    journal.close();
    rmSync(dirname(path), { recursive: true, force: true });
  }
});
