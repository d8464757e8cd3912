// The stores the ledger micro-bench runs on: a SQLite file in a temporary directory, and a fresh
// schema on the test PostgreSQL (the one the tests use), dropped afterwards.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { openStore, type Store } from '../src/store/open.js';

const DEFAULT_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/test';

export interface BenchStore {
  name: 'sqlite' | 'postgres';
  store: Store;
  /** The store's URL, for processes that open it too. */
  url: string;
  /** Closes the store and removes what it made. */
  dispose(): Promise<void>;
}

export async function openSqliteStore(): Promise<BenchStore> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tollroute-ledger-bench-'));
  const store = await openStore(`sqlite:${path.join(dir, 'ledger.db')}`);
  return {
    name: 'sqlite',
    store,
    url: `sqlite:${path.join(dir, 'ledger.db')}`,
    async dispose() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function postgresBaseUrl(): string {
  return process.env.TOLLROUTE_TEST_POSTGRES_URL || DEFAULT_POSTGRES_URL;
}

/** Undefined when PostgreSQL answers, else why not. */
export async function postgresUnreachable(url: string): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3_000 });
  try {
    await client.connect();
    await client.query('select 1');
    return undefined;
  } catch (error) {
    return `${url.replace(/\/\/[^@/]*@/, '//***@')} unreachable (${(error as Error).message || String(error)})`;
  } finally {
    await client.end().catch(() => {});
  }
}

/** A store on a schema of its own (`bench_<random>`), which openStore creates and dispose drops. */
export async function openPostgresStore(baseUrl: string): Promise<BenchStore> {
  const schema = `bench_${randomBytes(6).toString('hex')}`;
  const url = new URL(baseUrl);
  url.searchParams.set('schema', schema);
  const drop = async () => {
    const client = new pg.Client({ connectionString: baseUrl });
    await client.connect();
    try {
      await client.query(`drop schema if exists "${schema}" cascade`);
    } finally {
      await client.end();
    }
  };
  let store: Store;
  try {
    store = await openStore(url.toString());
  } catch (error) {
    // The schema may exist already when the migration failed.
    await drop().catch(() => {});
    throw error;
  }
  return {
    name: 'postgres',
    store,
    url: url.toString(),
    async dispose() {
      await store.close();
      await drop();
    },
  };
}
