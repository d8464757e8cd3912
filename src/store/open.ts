// Turns a store URL into a migrated Kysely handle on SQLite or PostgreSQL.
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { Kysely, PostgresDialect, type PostgresPool, type PostgresPoolClient, SqliteDialect } from 'kysely';
import pg from 'pg';
import { BACKSTOP_CHECKPOINT_PAGES, type Checkpointer, startCheckpointer } from './checkpointer.js';
import { markConnectionLost } from './health.js';
import { postgresHotLedger } from './hot-ledger/postgres.js';
import { sqliteHotLedger } from './hot-ledger/sqlite.js';
import type { HotLedger, HotLedgerLog } from './hot-ledger/types.js';
import { type Dialect, migrateToLatest } from './migrations.js';
import type { DB } from './schema.js';
import { Database } from './sqlite-driver.js';
import type { UsageMoveSchedule } from './usage-recent.js';

export interface Store {
  db: Kysely<DB>;
  dialect: Dialect;
  /** The hold and settle steps of metered calls, in the fewest statements this store needs. */
  hotLedger?: HotLedger;
  close(): Promise<void>;
  /**
   * Makes every write fail with this SQLite error code (`SQLITE_FULL`…) until called with null:
   * a store that refuses writes on demand, for tests and drills. SQLite only.
   */
  failWrites?(code: string | null): void;
  /** The schema is migrated: statements from now on have the store's query timeout (PostgreSQL). */
  migrated?(): void;
  /** Builds `hotLedger` once the schema is migrated. */
  prepareHotLedger?(): void;
}

export interface StoreOptions {
  /** Where the store reports what an operator should know of; nothing is logged without it. */
  log?: HotLedgerLog;
  /** SQLite: when usage_recent is moved into usage (store/usage-recent.ts); tests make it often. */
  moveUsage?: UsageMoveSchedule;
  /** SQLite: how long a hold decided in memory may stay unwritten (hot-ledger/sqlite.ts); 250 ms. */
  maxUnwrittenHoldMs?: number;
  /**
   * SQLite: the file of settles answered before the store has them (hot-ledger/answered-settles.ts),
   * for the one gateway serving the store; used with synchronous=normal only. Without it (the CLI,
   * an in-memory store) every settle is committed before its answer.
   */
  settleJournal?: string;
  /** SQLite: refuse a file that does not exist yet, rather than create an empty store there. */
  mustExist?: boolean;
  /** SQLite: the longest an answered settle waits in the journal before a timer writes it (20 ms); tests lengthen it. */
  answeredSettleWriteWithinMs?: number;
}

// `sqlite:./data/tollroute.db`, `sqlite::memory:`, `postgres://…?schema=name`, `postgresql://…`
export async function openStore(url: string, options: StoreOptions = {}): Promise<Store> {
  const store = url.startsWith('sqlite:')
    ? openSqlite(url.slice('sqlite:'.length), options)
    : /^postgres(ql)?:\/\//.test(url)
      ? await openPostgres(url, options)
      : null;
  if (!store) throw new Error(`store url: expected sqlite:<path> or postgres://…, got ${redact(url)}`);
  try {
    await migrateToLatest(store.db, store.dialect);
    store.migrated?.();
    store.prepareHotLedger?.();
  } catch (error) {
    await store.close();
    throw error;
  }
  return store;
}

// SQLite's `synchronous` in WAL mode: `normal` (the default) loses nothing to a crash of the
// process, but a power loss may undo the last commits (under a second: each checkpoint syncs the
// log); `full` syncs every commit and turns the settle journal off.
const SQLITE_SYNC_MODES = new Set(['normal', 'full', 'extra']);

function openSqlite(location: string, options: StoreOptions): Store {
  const [path = '', query = ''] = location.split('?', 2);
  if (!path) throw new Error('store url: sqlite: needs a path or :memory:');
  const synchronous = new URLSearchParams(query).get('synchronous') ?? 'normal';
  if (!SQLITE_SYNC_MODES.has(synchronous)) throw new Error(`store url: synchronous must be normal, full or extra, got ${JSON.stringify(synchronous)}`);
  const file = path === ':memory:' ? path : resolve(process.cwd(), path);
  if (options.mustExist && file !== ':memory:' && !existsSync(file)) {
    throw new Error(`no store at ${file} (check store: in the configuration, or pass --create to make a new one)`);
  }
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
  const sqlite = new Database(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma(`synchronous = ${synchronous}`);
  // Another process (a second instance, the CLI) may hold the write lock for a moment: wait, don't fail.
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('foreign_keys = ON');
  const writeFault: { code: string | null } = { code: null };
  // Kysely's statements commit the hot ledger's open transaction first (hot-ledger/sqlite.ts).
  const hotLedgerHook = { beforeForeignStatement: () => {} };
  const db = new Kysely<DB>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite, writeFault, hotLedgerHook) }) });
  // A file's checkpoints run in a worker thread; an in-memory database has no log to checkpoint.
  let checkpointer: Checkpointer | undefined;
  if (file !== ':memory:') {
    sqlite.pragma(`wal_autocheckpoint = ${BACKSTOP_CHECKPOINT_PAGES}`);
    checkpointer = startCheckpointer(file);
  }
  const checkWritable = () => {
    if (writeFault.code) failingStatement(writeFault.code).run();
  };
  return {
    db,
    dialect: 'sqlite',
    async close() {
      this.hotLedger?.close?.(); // settles answered and not yet written, first
      await checkpointer?.stop();
      await db.destroy();
    },
    failWrites: (code) => {
      writeFault.code = code;
    },
    // Its statements are prepared against the tables, so only once they exist.
    prepareHotLedger() {
      const hotLedger = sqliteHotLedger(
        db,
        sqlite,
        {
          checkWritable,
          countCommit: checkpointer?.noteCommit,
          moveUsage: options.moveUsage,
          maxUnwrittenMs: options.maxUnwrittenHoldMs,
          settleJournal: file !== ':memory:' && synchronous === 'normal' ? options.settleJournal : undefined,
          answeredSettleWriteWithinMs: options.answeredSettleWriteWithinMs,
        },
        options.log,
      );
      hotLedgerHook.beforeForeignStatement = hotLedger.beforeForeignStatement!;
      this.hotLedger = hotLedger;
    },
  };
}

const WRITE = /^\s*(insert|update|delete)\b/i;
/** The tables and views whose rows the hot ledger writes, or that read them. */
const MONEY_TABLES = /\b(accounts|holds|ledger|usage\w*|key_spend)\b/i;
/**
 * A read of none of the hot ledger's tables (the task and webhook pollers', several a second): it
 * needs neither the holds decided in memory written nor the ledger's transaction committed first, and
 * moves no balance. Writing those holds for it would send every call in flight down the slower path
 * of a hold written alone and settled apart.
 */
const readsNoMoney = (source: string) => /^\s*select\b/i.test(source) && !MONEY_TABLES.test(source);

/** A statement that fails as a full or broken disk would. */
function failingStatement(code: string) {
  const fail = () => {
    throw new Database.SqliteError(`injected store fault: ${code}`, code);
  };
  return { reader: false, run: fail, all: fail, get: fail, iterate: fail };
}

/**
 * SQLite ends a transaction itself on some errors (SQLITE_FULL, SQLITE_IOERR); Kysely's rollback
 * then fails with "cannot rollback - no transaction is active" and that error replaces the real
 * one. A rollback with nothing to roll back is a no-op here, so the real cause is what surfaces.
 */
function tolerantRollback(sqlite: BetterSqlite3.Database, statement: BetterSqlite3.Statement) {
  return {
    reader: false,
    run: () => (sqlite.inTransaction ? statement.run() : { changes: 0, lastInsertRowid: 0 }),
  };
}

const STATEMENT_CACHE_SIZE = 256;

/**
 * Kysely prepares every query afresh; the gateway runs the same few dozen statements on every
 * call, so they are prepared once and reused (better-sqlite3 statements are re-runnable).
 */
function withStatementCache(
  sqlite: BetterSqlite3.Database,
  writeFault: { code: string | null },
  hotLedger: { beforeForeignStatement(): void },
): Pick<BetterSqlite3.Database, 'prepare' | 'close'> {
  const cache = new Map<string, BetterSqlite3.Statement>();
  const rollback = tolerantRollback(sqlite, sqlite.prepare('rollback'));
  return {
    prepare(source: string) {
      // Kysely prepares each statement just before it runs it, so this is "before it runs".
      if (!readsNoMoney(source)) hotLedger.beforeForeignStatement();
      if (source === 'rollback') return rollback;
      if (writeFault.code && WRITE.test(source)) return failingStatement(writeFault.code);
      let statement = cache.get(source);
      if (!statement) {
        // Oldest out first when full: queries built from varying input (IN lists) must not grow it forever.
        if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value as string);
        statement = sqlite.prepare(source);
        cache.set(source, statement);
      }
      return statement;
    },
    close: () => {
      hotLedger.beforeForeignStatement();
      sqlite.close();
    },
  } as Pick<BetterSqlite3.Database, 'prepare' | 'close'>;
}

// int8 (BIGINT, COUNT) arrives as text; money and instants fit a double exactly below 2^53,
// and a value above that is a bug worth an error rather than a silently rounded balance.
function parseInt8(text: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw new Error(`int8 value ${text} is beyond Number.MAX_SAFE_INTEGER`);
  return n;
}

// Per pool, not pg.types.setTypeParser: the global parser would change every other pg user in the process.
export const int8AsNumber: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === pg.types.builtins.INT8 && format !== 'binary' ? parseInt8 : pg.types.getTypeParser(oid, format)) as pg.CustomTypesConfig['getTypeParser'],
};

const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
// `off` acknowledges a commit before PostgreSQL has flushed it: a killed gateway loses nothing (the
// server flushes within a fraction of a second), a crash of the database server can lose the last
// commits. The server's own setting (usually `on`) applies unless the store URL names one.
const SYNCHRONOUS_COMMIT = ['on', 'off', 'local', 'remote_write', 'remote_apply'];

const CONNECT_TIMEOUT_MS = 5_000;
const QUERY_TIMEOUT_MS = 10_000;
const KEEP_ALIVE_DELAY_MS = 10_000;
const IDLE_IN_TRANSACTION_MS = 30_000;

/** `connect_timeout_ms` and `query_timeout_ms` of the store URL (taken out of it), else the defaults. */
function connectionTimeouts(url: URL): { connectMs: number; queryMs: number } {
  const read = (name: string, fallback: number) => {
    const text = url.searchParams.get(name);
    url.searchParams.delete(name);
    if (text === null) return fallback;
    const ms = Number(text);
    if (!Number.isSafeInteger(ms) || ms <= 0)
      throw new Error(`store url: ${name} must be a positive whole number of milliseconds, got ${JSON.stringify(text)}`);
    return ms;
  };
  return { connectMs: read('connect_timeout_ms', CONNECT_TIMEOUT_MS), queryMs: read('query_timeout_ms', QUERY_TIMEOUT_MS) };
}

async function openPostgres(url: string, storeOptions: StoreOptions): Promise<Store> {
  const parsed = new URL(url);
  const schema = parsed.searchParams.get('schema');
  const synchronousCommit = parsed.searchParams.get('synchronous_commit');
  // pg would pass an unknown parameter to the server as a setting and fail the connection.
  parsed.searchParams.delete('schema');
  parsed.searchParams.delete('synchronous_commit');
  const timeouts = connectionTimeouts(parsed);
  if (schema !== null && !SCHEMA_NAME.test(schema)) {
    throw new Error(`store url: schema must match ${SCHEMA_NAME}, got ${JSON.stringify(schema)}`);
  }
  if (synchronousCommit !== null && !SYNCHRONOUS_COMMIT.includes(synchronousCommit)) {
    throw new Error(`store url: synchronous_commit must be one of ${SYNCHRONOUS_COMMIT.join(', ')}, got ${JSON.stringify(synchronousCommit)}`);
  }
  // Startup options apply to every connection the pool ever opens, before its first query.
  const options = [schema && `-c search_path=${schema}`, synchronousCommit && `-c synchronous_commit=${synchronousCommit}`].filter(Boolean).join(' ');
  const pool = new pg.Pool({
    connectionString: parsed.toString(),
    max: 10,
    types: int8AsNumber,
    // A store cut off or stalled fails a connection within these (and a statement within the
    // query timeout, set per statement below), never leaves a call waiting: the failure marks the
    // store unhealthy (store/health.ts). The server ends a transaction its client left open, so an
    // instance cut off mid-transaction holds no row lock of an account for long.
    connectionTimeoutMillis: timeouts.connectMs,
    idle_in_transaction_session_timeout: Math.max(IDLE_IN_TRANSACTION_MS, timeouts.queryMs),
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEP_ALIVE_DELAY_MS,
    ...(options ? { options } : {}),
  });
  // An idle connection the server dropped (restart, failover) is emitted here; unheard, it would
  // crash the process. The pool has already discarded it and the next query opens a new one.
  pool.on('error', () => {});
  // Migrations run without a query timeout (an index on a large table takes its time); every
  // statement after them has one.
  const queryTimeout = { ms: 0 };
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool: markingLostConnections(pool, queryTimeout) }) });
  const store: Store = {
    db,
    dialect: 'postgres',
    hotLedger: postgresHotLedger(
      { query: (statement) => pool.query({ ...statement, query_timeout: queryTimeout.ms } as typeof statement).catch(markLostUnlessAnswered) },
      undefined,
      storeOptions.log,
    ),
    close: () => db.destroy(),
    migrated() {
      queryTimeout.ms = timeouts.queryMs;
    },
  };
  if (schema) {
    try {
      await createSchema(pool, schema);
    } catch (error) {
      await store.close();
      throw error;
    }
  }
  return store;
}

/**
 * The pool as Kysely uses it, every failure of a connection or a query marked as the store's own
 * (see store/health.ts): a lost connection is told apart from the same error code elsewhere.
 */
function markingLostConnections(pool: pg.Pool, queryTimeout: { ms: number }): PostgresPool {
  return {
    async connect() {
      const client = await pool.connect().catch(markLostUnlessAnswered);
      // A connection whose query timed out or failed unanswered may still have it in flight (a
      // stalled network): it goes, rather than back to the pool to stall the next query too.
      let lost: Error | undefined;
      return {
        query: (sql: string, parameters: ReadonlyArray<unknown>) =>
          client.query({ text: sql, values: parameters as unknown[], query_timeout: queryTimeout.ms } as pg.QueryConfig).catch((error: unknown) => {
            if (!(error instanceof pg.DatabaseError)) lost = error instanceof Error ? error : new Error(String(error));
            return markLostUnlessAnswered(error);
          }),
        release: () => client.release(lost),
      } as unknown as PostgresPoolClient; // no cursors: the gateway never streams a query
    },
    end: () => pool.end(),
  };
}

/** The server's own answer (a SQLSTATE) is classified by its code; anything else lost the connection. */
function markLostUnlessAnswered(error: unknown): never {
  if (error instanceof pg.DatabaseError) throw error;
  return markConnectionLost(error);
}

async function createSchema(pool: pg.Pool, schema: string): Promise<void> {
  try {
    await pool.query(`create schema if not exists "${schema}"`);
  } catch (error) {
    // Two processes creating the same schema at once: "if not exists" can still lose the race
    // on the catalogue's unique index; the schema being there is all that matters.
    const { rowCount } = await pool.query('select 1 from pg_namespace where nspname = $1', [schema]);
    if (!rowCount) throw error;
  }
}

function redact(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//***@');
}
