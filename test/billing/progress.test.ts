// The progress recorder writes what each open stream has delivered, so that a crash bills it: every
// stream still tracked, none that was untracked, and only figures that changed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createAccount } from '../../src/billing/accounts.js';
import { holdFunds } from '../../src/billing/ledger.js';
import { createProgressRecorder } from '../../src/billing/progress.js';
import type { RecordedProgress } from '../../src/billing/recovery.js';
import { findHold, recordProgress } from '../../src/store/holds.js';
import { openStore, type Store } from '../../src/store/open.js';

const call = { requestId: 'r', model: 'm', endpoint: 'e' };
const quiet = { warn() {} };
const progressOf = (charge: number): RecordedProgress => ({ units: { output_token: charge }, charge_micros: charge });

async function openHolds(store: Store, count: number): Promise<string[]> {
  const account = await createAccount(store, { name: 'streams', creditMicros: 1_000_000 });
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push((await holdFunds(store, { accountId: account.id, amountMicros: 100, ...call })).holdId);
  return ids;
}

const recordedCharge = async (store: Store, holdId: string) => {
  const progress = (await findHold(store.db, holdId))?.progress;
  return progress ? (JSON.parse(progress) as RecordedProgress).charge_micros : undefined;
};

test('a flush records the progress of every tracked stream and of none that was untracked, whatever the order they left in', async () => {
  const store = await openStore('sqlite::memory:');
  const recorder = createProgressRecorder({ store, intervalMs: 60_000, log: quiet });
  const holds = await openHolds(store, 40);
  const untrack = holds.map((holdId, i) => recorder.track(holdId, () => progressOf(i + 1)));
  // Leaving from the middle, the end and the start moves other streams into the places left
  const leaving = [5, 39, 0, 17, 38, 1, 20, 21, 22, 10];
  for (const i of leaving) untrack[i]!();
  untrack[5]!(); // a second untrack of the same stream changes nothing

  await recorder.flush();
  for (const [i, holdId] of holds.entries()) {
    assert.equal(await recordedCharge(store, holdId), leaving.includes(i) ? undefined : i + 1, `stream ${i}`);
  }
  recorder.stop();
  await store.close();
});

test('a stream whose figure has not changed since it was written is not written again', async () => {
  const store = await openStore('sqlite::memory:');
  const recorder = createProgressRecorder({ store, intervalMs: 60_000, log: quiet });
  const [still, growing] = await openHolds(store, 2);
  let grown = 10;
  recorder.track(still!, () => progressOf(7));
  recorder.track(growing!, () => progressOf(grown));
  await recorder.flush();

  // Overwritten behind the recorder's back: a second write of the same figure would put it back
  await recordProgress(store.db, [
    { id: still!, progress: JSON.stringify(progressOf(1)) },
    { id: growing!, progress: JSON.stringify(progressOf(1)) },
  ]);
  grown = 12;
  await recorder.flush();
  assert.equal(await recordedCharge(store, still!), 1);
  assert.equal(await recordedCharge(store, growing!), 12);
  recorder.stop();
  await store.close();
});

test('a stream that has delivered nothing yet is not written', async () => {
  const store = await openStore('sqlite::memory:');
  const recorder = createProgressRecorder({ store, intervalMs: 60_000, log: quiet });
  const [silent] = await openHolds(store, 1);
  recorder.track(silent!, () => undefined);
  await recorder.flush();
  assert.equal((await findHold(store.db, silent!))?.progress, null);
  recorder.stop();
  await store.close();
});
