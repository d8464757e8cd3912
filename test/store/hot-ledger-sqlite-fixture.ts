// What the SQLite hot ledger's tests share: a fresh store a test, the steps' entries, and what a
// second connection (the CLI, another process) would see of the file.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import type BetterSqlite3 from 'better-sqlite3';
import { createAccount } from '../../src/billing/accounts.js';
import { holdFunds } from '../../src/billing/ledger.js';
import { findAccount } from '../../src/store/accounts.js';
import { openStore, type Store, type StoreOptions } from '../../src/store/open.js';
import { Database } from '../../src/store/sqlite-driver.js';

const dir = mkdtempSync(join(tmpdir(), 'tollroute-hot-ledger-'));
let n = 0;
after(() => rmSync(dir, { recursive: true, force: true }));
let currentFile = '';
/** The file of the store opened last. */
export const storeFile = () => currentFile;
export const freshStore = (query = '', options: StoreOptions = {}) => {
  currentFile = join(dir, `s${++n}.db`);
  return openStore(`sqlite:${currentFile}${query}`, options);
};

export const holdOf = (accountId: string, amountMicros: number, requestId = 'req_1') =>
  ({ accountId, amountMicros, requestId, model: 'm', endpoint: 'chat' }) as const;

export const hotHold = (accountId: string, holdId: string, amountMicros: number) => ({
  ...holdOf(accountId, amountMicros),
  holdId,
  keyId: null,
  instanceId: null,
  clientRequestId: null,
  now: 1,
});
export const settleOf = (holdId: string) => ({ holdId, chargeMicros: 100, units: '{}', requestId: null, flags: [], usageId: 'use_1', now: 1 });
/** A settle whose usage row has no units (NOT NULL): its insert, the step's last write, fails after the hold was closed. */
export const unwritableSettleOf = (holdId: string) => ({ ...settleOf(holdId), units: null as unknown as string });

/** What `read` finds through a second, read-only connection: what has been committed. */
export function readCommitted<T>(read: (other: BetterSqlite3.Database) => T): T {
  const other = new Database(currentFile, { readonly: true });
  try {
    return read(other);
  } finally {
    other.close();
  }
}

/** The balance as a second connection reads it: what has been committed. */
export const otherConnectionBalance = (accountId: string): number =>
  readCommitted((other) => (other.prepare('select balance_micros from accounts where id = ?').get(accountId) as { balance_micros: number }).balance_micros);

// What another writer (the CLI, a second process) runs to move a balance with its ledger row, the
// row joined to the account's chain as every writer must (store/ledger-chain.ts). Bound: the
// account, kind, delta and the account again; then the delta, the new row's id and the account.
export const CHAINED_LEDGER_ROW = `insert into ledger (account_id, kind, balance_delta_micros, held_delta_micros, created_at, prev_id)
  values (?, ?, ?, 0, 1, (select last_ledger_id from accounts where id = ?))`;
export const MOVE_BALANCE_TO_ROW = 'update accounts set balance_micros = balance_micros + ?, last_ledger_id = ? where id = ?';

/** Another process moves the account's balance by `delta`, with its ledger row of `kind` in the account's chain, committed at once. */
export function moveBalanceElsewhere(accountId: string, delta: number, kind = 'adjust') {
  const other = new Database(currentFile);
  try {
    other.transaction(() => {
      const row = other.prepare(CHAINED_LEDGER_ROW).run(accountId, kind, delta, accountId);
      other.prepare(MOVE_BALANCE_TO_ROW).run(delta, row.lastInsertRowid, accountId);
    })();
  } finally {
    other.close();
  }
}

/** Whether a second writer (the CLI, another process) would find the write lock taken now. */
export function writeLockTakenBy(file: string): boolean {
  const other = new Database(file, { timeout: 0 });
  try {
    other.prepare('begin immediate').run();
    other.prepare('rollback').run();
    return false;
  } catch (error) {
    if ((error as { code?: string }).code === 'SQLITE_BUSY') return true;
    throw error;
  } finally {
    other.close();
  }
}

/** What the store logged, each warning as its message and fields. */
export function recordingLog() {
  const warnings: { msg: string; obj: Record<string, unknown> }[] = [];
  return { warnings, log: { warn: (obj: object, msg: string) => warnings.push({ msg, obj: obj as Record<string, unknown> }) } };
}

export async function withStore(run: (store: Store) => Promise<void>, query = '', log = recordingLog().log, options: StoreOptions = {}) {
  const store = await freshStore(query, { log, ...options });
  try {
    await run(store);
  } finally {
    await store.close();
  }
}

/** The account's balance and held amount, in that order. */
export const balanceAndHeld = (store: Store, accountId: string) => findAccount(store.db, accountId).then((a) => [a?.balance_micros, a?.held_micros]);

export interface FailingSettle {
  store: Store;
  accountId: string;
  /** The open hold of 1 000 on the account (of 10 000). */
  holdId: string;
  /** Settles that hold; it fails, as its usage row cannot be written. */
  settle(): Promise<unknown>;
  /** What the store warned of. */
  warnings: ReturnType<typeof recordingLog>['warnings'];
}

export async function withFailingSettle(run: (setup: FailingSettle) => Promise<void>) {
  const recorded = recordingLog();
  await withStore(
    async (store) => {
      const account = await createAccount(store, { name: 'a', creditMicros: 10_000 });
      const hold = await holdFunds(store, holdOf(account.id, 1_000));
      const settle = () => store.hotLedger!.settle(unwritableSettleOf(hold.holdId));
      await run({ store, accountId: account.id, holdId: hold.holdId, settle, warnings: recorded.warnings });
    },
    '',
    recorded.log,
  );
}

/** The statements the steps run on `sqlite`, by their first words, in order. */
export function countingRuns(sqlite: BetterSqlite3.Database): { connection: BetterSqlite3.Database; runs: string[] } {
  const runs: string[] = [];
  const counted = (text: string, statement: BetterSqlite3.Statement) => {
    const proxy: BetterSqlite3.Statement = new Proxy(statement, {
      get(target, name) {
        const value = Reflect.get(target, name, target);
        if (typeof value !== 'function') return value;
        if (name === 'pluck') {
          return (...args: unknown[]) => {
            value.apply(target, args);
            return proxy; // still counted
          };
        }
        if (name !== 'run' && name !== 'get' && name !== 'all') return value.bind(target);
        return (...args: unknown[]) => {
          runs.push(text.trim().split(/\s+/).slice(0, 3).join(' '));
          return value.apply(target, args);
        };
      },
    });
    return proxy;
  };
  const connection = new Proxy(sqlite, {
    get(target, name) {
      if (name === 'prepare') return (text: string) => counted(text, target.prepare(text));
      const value = Reflect.get(target, name, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { connection, runs };
}
