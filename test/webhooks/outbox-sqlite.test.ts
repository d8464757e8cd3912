import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { runOutboxContract } from './outbox-contract.js';

const dir = mkdtempSync(join(tmpdir(), 'tollroute-outbox-'));
let n = 0;
after(() => rmSync(dir, { recursive: true, force: true }));

// A file, not :memory:, so a second connection (the racing claimer) sees the same database.
runOutboxContract('SQLite', () => `sqlite:${join(dir, `outbox-${++n}.db`)}`);
