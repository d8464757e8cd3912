import assert from 'node:assert/strict';
import { test } from 'node:test';
import { newId } from '../../src/store/ids.js';

test('ids name their kind and carry 128 random bits, never repeating across refills of the pool', () => {
  const ids = Array.from({ length: 2_000 }, () => newId('hold'));
  for (const id of ids) assert.match(id, /^hold_[A-Za-z0-9_-]{22}$/);
  assert.equal(new Set(ids).size, ids.length);
  // consecutive ids share no bytes: each takes its own slice of the pool
  assert.notEqual(ids[0]!.slice(5, 15), ids[1]!.slice(5, 15));
});
