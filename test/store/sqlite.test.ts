import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { runStoreContract } from './contract.js';

const dir = mkdtempSync(join(tmpdir(), 'tollroute-store-'));
let n = 0;
after(() => rmSync(dir, { recursive: true, force: true }));

// A file, not :memory:, so WAL, busy_timeout and a second process behave as in production.
runStoreContract('SQLite', () => `sqlite:${join(dir, `store-${++n}.db`)}`);
