import assert from 'node:assert/strict';
import { test } from 'node:test';
import { newId, randomHex } from '../../src/store/ids.js';

test('ids name their kind and never repeat, across refills of the random pool', () => {
  const ids = Array.from({ length: 2_000 }, () => newId('hold'));
  for (const id of ids) assert.match(id, /^hold_[A-Za-z0-9_-]{22}$/);
  assert.equal(new Set(ids).size, ids.length);
  // ids of the same millisecond differ in their random part: each takes its own slice of the pool
  assert.notEqual(ids[0]!.slice(13, 20), ids[1]!.slice(13, 20));
});

test('an id made later sorts after an earlier one when compared as text', async (t) => {
  const earlier = newId('use');
  await new Promise((resolve) => setTimeout(resolve, 3));
  const later = newId('use');
  assert.ok(earlier < later, `${earlier} < ${later}`);
  // and at every step of the last time digit, carries included (64 steps walk its whole alphabet)
  t.mock.timers.enable({ apis: ['Date'], now: 64 ** 3 - 10 });
  let previous = newId('use');
  for (let step = 0; step < 140; step++) {
    t.mock.timers.tick(1);
    const next = newId('use');
    assert.ok(previous < next, `${previous} < ${next}`);
    previous = next;
  }
});

test('random hex has the length asked for and does not repeat, across refills of its pool', () => {
  const ids = Array.from({ length: 1_000 }, () => randomHex(12));
  for (const id of ids) assert.match(id, /^[0-9a-f]{24}$/);
  assert.equal(new Set(ids).size, ids.length);
  // each takes its own slice of the pool: neighbours share no bytes
  assert.notEqual(ids[0]!.slice(0, 8), ids[1]!.slice(0, 8));
});
