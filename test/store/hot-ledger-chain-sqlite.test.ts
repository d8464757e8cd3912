// The SQLite hot ledger chains the ledger rows it writes by itself (store/ledger-chain.ts), and a
// hold that reads the balance before it writes takes the write lock first, so another process's
// write in between is waited for, never misread.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { sql } from 'kysely';
import { checkAccountBalance, createAccount } from '../../src/billing/accounts.js';
import { holdFunds, releaseHold, settleHold } from '../../src/billing/ledger.js';
import { GatewayError } from '../../src/errors.js';
import { findAccount } from '../../src/store/accounts.js';
import { listLedger } from '../../src/store/ledger-rows.js';
import { openStore } from '../../src/store/open.js';
import { sqliteDriverPath } from '../../src/store/sqlite-driver.js';
import { CHAINED_LEDGER_ROW, MOVE_BALANCE_TO_ROW } from './hot-ledger-sqlite-fixture.js';

const dir = mkdtempSync(join(tmpdir(), 'tollroute-hot-chain-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const newFile = () => join(dir, `s${++n}.db`);
const call = (accountId: string, amountMicros: number, requestId: string) => ({ accountId, amountMicros, requestId, model: 'm', endpoint: 'chat' });

test("the hot ledger's holds, settles and releases chain their rows", async () => {
  const store = await openStore(`sqlite:${newFile()}`);
  try {
    const { id } = await createAccount(store, { name: 'a', creditMicros: 1_000_000 });
    for (let i = 0; i < 3; i++) {
      const settled = await holdFunds(store, call(id, 1_000, `req_s${i}`));
      const released = await holdFunds(store, call(id, 500, `req_r${i}`));
      await settleHold(store, settled.holdId, { chargeMicros: 300 + i, units: { output_token: 1 } });
      await releaseHold(store, released.holdId);
    }
    const { rows: scanned } = await sql<{ id: number }>`select id from ledger where account_id = ${id} order by id desc`.execute(store.db);
    assert.equal(scanned.length, 1 + 3 * 4);
    assert.deepEqual(
      (await listLedger(store, { accountId: id })).map((row) => row.id),
      scanned.map((row) => row.id),
    );
    assert.equal((await checkAccountBalance(store, id)).consistent, true);
  } finally {
    await store.close();
  }
});

/** Another process takes the write lock, spends the account's whole balance, holds the lock for `ms`, then commits. */
function spendElsewhere(file: string, accountId: string, ms: number): { locked: Promise<void>; done: Promise<void> } {
  const script = `
    const Database = require(${JSON.stringify(sqliteDriverPath)});
    const [file, accountId, ms] = process.argv.slice(1);
    const db = new Database(file);
    db.prepare('begin immediate').run();
    const { balance_micros: balance } = db.prepare('select balance_micros from accounts where id = ?').get(accountId);
    const row = db.prepare(${JSON.stringify(CHAINED_LEDGER_ROW)}).run(accountId, 'debit', -balance, accountId);
    db.prepare(${JSON.stringify(MOVE_BALANCE_TO_ROW)}).run(-balance, row.lastInsertRowid, accountId);
    process.stdout.write('locked\\n');
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Number(ms));
    db.prepare('commit').run();`;
  const child = spawn(process.execPath, ['-e', script, file, accountId, String(ms)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const locked = new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (data: Buffer) => data.toString().includes('locked') && resolve());
    child.once('exit', () => reject(new Error('the other process ended before it took the lock')));
  });
  const done = new Promise<void>((resolve, reject) => child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`exit ${code}`)))));
  return { locked, done };
}

test("a hold waits for another process's write to the balance and is refused on what it left, never on a stale read", async () => {
  const file = newFile();
  const store = await openStore(`sqlite:${file}`);
  try {
    const { id } = await createAccount(store, { name: 'b', creditMicros: 10_000 });
    const other = spendElsewhere(file, id, 300);
    await other.locked;
    await assert.rejects(holdFunds(store, call(id, 5_000, 'req_late')), (error) => error instanceof GatewayError && error.status === 402);
    await other.done;
    const account = await findAccount(store.db, id);
    assert.equal(account?.balance_micros, 0);
    assert.equal(account?.held_micros, 0);
    assert.equal((await checkAccountBalance(store, id)).consistent, true);
  } finally {
    await store.close();
  }
});
