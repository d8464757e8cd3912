// SQLite's checkpoints (the syncs of synchronous=normal) run in a worker thread, not on the event loop.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { createAccount } from '../../src/billing/accounts.js';
import { startCheckpointer } from '../../src/store/checkpointer.js';
import { openStore } from '../../src/store/open.js';
import { Database } from '../../src/store/sqlite-driver.js';
import { eventually } from '../helpers/gateway.js';

const dir = mkdtempSync(join(tmpdir(), 'tollroute-checkpoint-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('what is committed to the log reaches the database file without the writer checkpointing', async () => {
  const file = join(dir, 'store.db');
  const store = await openStore(`sqlite:${file}`);
  try {
    // Far below the writer's own auto-checkpoint limit: only the worker copies these pages over.
    const before = statSync(file).size;
    for (let i = 0; i < 300; i++) await createAccount(store, { name: `a${i}`, creditMicros: 1_000 });
    await eventually(() => statSync(file).size > before, 5_000);
    assert.ok(statSync(`${file}-wal`).size > 0, 'the writes went through the log');
  } finally {
    await store.close();
  }
});

/**
 * A writer of its own (no auto-checkpoint) beside a checkpointer that calls it busy at 20 commits
 * (checkpointed every 20 ms) and otherwise waits ten minutes; `commits` rows are written and
 * counted, then `check` is given the database file's size from before them.
 */
async function withCountedCommits(name: string, commits: number, check: (file: string, sizeBefore: number) => Promise<void>) {
  const file = join(dir, name);
  const sqlite = new Database(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('wal_autocheckpoint = 0');
  sqlite.exec('create table rows (id integer primary key, text text)');
  const insert = sqlite.prepare('insert into rows (text) values (?)');
  const checkpointer = startCheckpointer(file, { busyCommits: 20, busyIntervalMs: 20, intervalMs: 600_000 });
  try {
    const sizeBefore = statSync(file).size;
    for (let i = 0; i < commits; i++) {
      insert.run('x'.repeat(2_000));
      checkpointer.noteCommit();
    }
    await check(file, sizeBefore);
  } finally {
    await checkpointer.stop();
    sqlite.close();
  }
}

test('a busy writer (enough commits counted) is checkpointed at the short interval', async () => {
  await withCountedCommits('counted.db', 20, async (file, sizeBefore) => {
    await eventually(() => statSync(file).size > sizeBefore, 5_000);
  });
});

test('a writer with fewer commits counted waits for the long interval', async () => {
  await withCountedCommits('uncounted.db', 19, async (file, sizeBefore) => {
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(statSync(file).size, sizeBefore, 'nothing reached the database file');
    assert.ok(statSync(`${file}-wal`).size > 0, 'the rows are in the log');
  });
});
