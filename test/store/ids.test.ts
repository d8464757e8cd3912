import assert from 'node:assert/strict';
import { test } from 'node:test';
import { newId, randomHex } from '../../src/store/ids.js';

test('ids name their kind and never repeat, across refills of the random pool', () => {
  const ids = Array.from({ length: 2_000 }, () => newId('hold'));
  for (const id of ids) assert.match(id, /^hold_[0-9A-Za-z]{22}$/);
  assert.equal(new Set(ids).size, ids.length);
  // ids of the same millisecond differ in their random part: each takes its own slice of the pool
  assert.notEqual(ids[0]!.slice(13, 20), ids[1]!.slice(13, 20));
});

test('an id made later sorts after an earlier one when compared as text', async (t) => {
  const earlier = newId('use');
  await new Promise((resolve) => setTimeout(resolve, 3));
  const later = newId('use');
  assert.ok(earlier < later, `${earlier} < ${later}`);
  // and at every step of the last time digit, carries included (62 steps walk its whole alphabet)
  t.mock.timers.enable({ apis: ['Date'], now: 62 ** 3 - 10 });
  let previous = newId('use');
  for (let step = 0; step < 140; step++) {
    t.mock.timers.tick(1);
    const next = newId('use');
    assert.ok(previous < next, `${previous} < ${next}`);
    previous = next;
  }
});

test('ids are letters and digits after their prefix, so a double click selects one whole', () => {
  for (const kind of ['acct', 'vid', 'req', 'whk'] as const) {
    for (let i = 0; i < 500; i++) assert.match(newId(kind), new RegExp(`^${kind}_[0-9A-Za-z]{22}$`));
  }
});

test('every digit of the random part is about as likely as any other', () => {
  const counts = new Map<string, number>();
  for (let i = 0; i < 20_000; i++) for (const digit of newId('use').slice(12)) counts.set(digit, (counts.get(digit) ?? 0) + 1);
  assert.equal(counts.size, 62);
  const expected = (20_000 * 14) / 62;
  // a byte % 62 without rejection makes the first 8 digits 5/4 as likely as the rest: 25 % over
  for (const [digit, count] of counts) assert.ok(Math.abs(count - expected) < expected * 0.08, `${digit}: ${count} of ${expected}`);
});

test('ids issued in the earlier base64url alphabet sort before every new one', () => {
  const issuedBefore = 'acct_-P7WXa_b-Qz3kLm9_x2YwZ';
  assert.ok(issuedBefore < newId('acct'));
});

test('random hex has the length asked for and does not repeat, across refills of its pool', () => {
  const ids = Array.from({ length: 1_000 }, () => randomHex(12));
  for (const id of ids) assert.match(id, /^[0-9a-f]{24}$/);
  assert.equal(new Set(ids).size, ids.length);
  // each takes its own slice of the pool: neighbours share no bytes
  assert.notEqual(ids[0]!.slice(0, 8), ids[1]!.slice(0, 8));
});
