import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { openStore } from '../../src/store/open.js';

test('a relative sqlite path is opened under the working directory, parent folders created', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollroute-open-'));
  const cwd = process.cwd();
  process.chdir(dir);
  try {
    const store = await openStore('sqlite:./data/nested/tollroute.db');
    await store.close();
    assert.equal(existsSync(join(dir, 'data/nested/tollroute.db')), true);
  } finally {
    process.chdir(cwd);
    rmSync(dir, { recursive: true, force: true });
  }
});

test('an in-memory sqlite store opens migrated and empty', async () => {
  const store = await openStore('sqlite::memory:');
  try {
    assert.deepEqual(await store.db.selectFrom('accounts').selectAll().execute(), []);
    assert.equal(store.dialect, 'sqlite');
  } finally {
    await store.close();
  }
});

test('a URL of another scheme is refused with the accepted forms', async () => {
  await assert.rejects(openStore('mysql://localhost/x'), /expected sqlite:<path> or postgres:\/\//);
});

test('a schema parameter that is not a plain identifier is refused before connecting', async () => {
  await assert.rejects(openStore('postgres://127.0.0.1:1/test?schema=a;drop'), /schema must match/);
});
