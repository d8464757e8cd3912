// SQLite's checkpoints (the syncs of synchronous=normal) run in a worker thread, not on the event loop.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { createAccount } from '../../src/billing/ledger.js';
import { openStore } from '../../src/store/open.js';
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
