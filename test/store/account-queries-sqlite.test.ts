import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { runAccountQueriesContract } from './account-queries-contract.js';

const dir = mkdtempSync(join(tmpdir(), 'tollroute-account-queries-'));
let n = 0;
after(() => rmSync(dir, { recursive: true, force: true }));

runAccountQueriesContract('SQLite', () => `sqlite:${join(dir, `store-${++n}.db`)}`);
