// Uploads a crashed process left in the spool are removed once no request could still use them.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { deleteStaleSpooled } from '../../src/files/sweep.js';

test('spooled uploads older than the longest request are deleted; younger ones and folders stay', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'tollroute-spool-'));
  try {
    const now = Date.now();
    for (const [name, ageMs] of [
      ['left-by-a-crash', 700_000],
      ['in-use', 5_000],
    ] as const) {
      writeFileSync(path.join(dir, name), 'x');
      utimesSync(path.join(dir, name), (now - ageMs) / 1000, (now - ageMs) / 1000);
    }
    mkdirSync(path.join(dir, 'folder'));
    assert.equal(await deleteStaleSpooled(dir, { now, maxAgeMs: 660_000 }), 1);
    assert.deepEqual(readdirSync(dir).sort(), ['folder', 'in-use']);
    assert.equal(await deleteStaleSpooled(path.join(dir, 'missing'), { now, maxAgeMs: 1 }), 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
