// A bench's temporary directory goes when the bench ends, unless BENCH_KEEP_WORKDIR=1 keeps it.
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { makeWorkDir, removeWorkDir } from '../../bench/work-dir.js';

test('a work directory is removed with what it holds', () => {
  const dir = makeWorkDir('work-dir-test');
  writeFileSync(path.join(dir, 'gateway.log'), 'a line\n');
  assert.equal(removeWorkDir(dir, undefined, {}), true);
  assert.equal(existsSync(dir), false);
});

test('BENCH_KEEP_WORKDIR=1 keeps the work directory, says where, and answers that it was not removed', (t) => {
  const dir = makeWorkDir('work-dir-test');
  t.after(() => removeWorkDir(dir, undefined, {}));
  const write = t.mock.method(process.stdout, 'write', () => true);
  assert.equal(removeWorkDir(dir, 'the samples are in it', { BENCH_KEEP_WORKDIR: '1' }), false);
  assert.equal(existsSync(dir), true);
  assert.equal(write.mock.calls[0]?.arguments[0], `work directory kept (the samples are in it): ${dir}\n`);
});

test('a work directory is named after its bench', () => {
  const dir = makeWorkDir('slow-streams');
  try {
    assert.match(path.basename(dir), /^tollroute-slow-streams-/);
  } finally {
    removeWorkDir(dir, undefined, {});
  }
});
