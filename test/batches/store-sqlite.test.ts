import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { runBatchStoreContract } from './store-contract.js';

const dir = mkdtempSync(join(tmpdir(), 'tollroute-batches-'));
let n = 0;
after(() => rmSync(dir, { recursive: true, force: true }));

// A file, not :memory:, so a second connection (the racing claimer) sees the same database.
runBatchStoreContract('SQLite', () => `sqlite:${join(dir, `batches-${++n}.db`)}`);
