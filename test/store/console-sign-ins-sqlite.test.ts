import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { runConsoleSignInsContract } from './console-sign-ins-contract.js';

const dir = mkdtempSync(join(tmpdir(), 'tollroute-console-sign-ins-'));
let n = 0;
after(() => rmSync(dir, { recursive: true, force: true }));

runConsoleSignInsContract('SQLite', () => `sqlite:${join(dir, `store-${++n}.db`)}`);
