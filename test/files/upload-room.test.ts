// An account's uploads in flight take their room in its quota before writing: claims first, then
// byte by byte, what a failed upload took given back, what a kept one used kept.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createUploadRooms } from '../../src/files/upload-room.js';

const stored = (bytes: number) => async () => bytes;

test('uploads side by side claim what they declare while room lasts, and none takes past the quota', async () => {
  const rooms = createUploadRooms({ quotaBytes: 1_000 });
  const a = await rooms.open('acct', { claimBytes: 400, readUsedBytes: stored(100) });
  const b = await rooms.open('acct', { claimBytes: 400, readUsedBytes: stored(100) });
  const c = await rooms.open('acct', { claimBytes: 400, readUsedBytes: stored(100) });
  assert.deepEqual([a.freeBytes(), b.freeBytes(), c.freeBytes()], [400, 400, 100]);
  assert.equal(a.take(400), true);
  assert.equal(c.take(100), true);
  assert.equal(c.take(1), false, 'past its claim, nothing is free');
  assert.equal(b.take(401), false);
  assert.equal(b.take(400), true);
});

test('a failed upload gives its room back; a kept one keeps what it used and returns the rest of its claim', async () => {
  const rooms = createUploadRooms({ quotaBytes: 1_000 });
  const kept = await rooms.open('acct', { claimBytes: 500, readUsedBytes: stored(0) });
  const failed = await rooms.open('acct', { claimBytes: 500, readUsedBytes: stored(0) });
  const waiting = await rooms.open('acct', { claimBytes: 0, readUsedBytes: stored(0) });
  assert.equal(kept.take(300), true);
  assert.equal(failed.take(500), true);
  assert.equal(waiting.freeBytes(), 0);
  kept.close({ kept: true });
  failed.close({ kept: false });
  assert.equal(waiting.freeBytes(), 700);
  assert.equal(waiting.take(701), false);
  assert.equal(waiting.take(700), true);
});

test("an account's room is read afresh once its last upload ended, and other accounts have their own", async () => {
  const rooms = createUploadRooms({ quotaBytes: 1_000 });
  const first = await rooms.open('acct', { claimBytes: 0, readUsedBytes: stored(900) });
  assert.equal(first.freeBytes(), 100);
  first.close({ kept: false });
  const later = await rooms.open('acct', { claimBytes: 0, readUsedBytes: stored(200) });
  assert.equal(later.freeBytes(), 800);
  const other = await rooms.open('other', { claimBytes: 0, readUsedBytes: stored(0) });
  assert.equal(other.freeBytes(), 1_000);
});
