// The SQLite driver picked for the running Node.js, and the failure that picks it: better-sqlite3 12
// aborts Node 24 when the garbage collector frees a statement; 13 crashes on Node 20.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { Database, sqliteDriverPath } from '../../src/store/sqlite-driver.js';

const run = promisify(execFile);
const nodeMajor = Number(process.versions.node.split('.')[0]);

function driverVersion(): string {
  let dir = dirname(sqliteDriverPath);
  while (!dir.endsWith('node_modules/better-sqlite3') && !dir.endsWith('node_modules/better-sqlite3-node20')) {
    dir = dirname(dir);
  }
  return JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).version;
}

test('the driver is better-sqlite3 13 on Node 22 and later, and 12 on Node 20', () => {
  assert.equal(driverVersion().split('.')[0], nodeMajor >= 22 ? '13' : '12');
});

test('the driver opens a database and runs statements', () => {
  const db = new Database(':memory:');
  db.exec('create table t (a integer)');
  db.prepare('insert into t values (?)').run(7);
  assert.deepEqual(db.prepare('select a from t').all(), [{ a: 7 }]);
  db.close();
});

test('statements freed by the garbage collector leave the process running', async () => {
  const script = `
    const Database = require(${JSON.stringify(sqliteDriverPath)});
    const db = new Database(':memory:');
    db.exec('create table t (a integer)');
    for (let round = 0; round < 20; round++) {
      for (let i = 0; i < 1000; i++) db.prepare('select ' + i + ' + a from t').all();
      globalThis.gc();
      await new Promise((resolve) => setImmediate(resolve));
    }
    db.close();
    console.log('survived');
  `;
  const { stdout } = await run(process.execPath, ['--expose-gc', '--input-type=commonjs', '-e', `(async () => {${script}})()`]);
  assert.equal(stdout.trim(), 'survived');
});
