// Finding the test PostgreSQL, and a throwaway schema per test so runs never see each other.
import { randomBytes } from 'node:crypto';
import { after, test } from 'node:test';
import pg from 'pg';
import { openStore } from '../../src/store/open.js';
import type { StoreUrls } from '../store/store-context.js';

// trust auth on the CI/dev box; the user is explicit because $USER may be unset in containers.
export const DEFAULT_TEST_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/test';

export function testPostgresUrl(): string {
  return process.env.TOLLROUTE_TEST_POSTGRES_URL || DEFAULT_TEST_POSTGRES_URL;
}

// undefined when reachable, else why not.
export async function postgresUnreachableReason(url = testPostgresUrl()): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('select 1');
    return undefined;
  } catch (error) {
    return `${url} unreachable (${(error as Error).message || String(error)})`;
  } finally {
    await client.end().catch(() => {});
  }
}

// Returns the base URL when PostgreSQL answers. Otherwise registers a skipped test (printing
// why) or, with TOLLROUTE_REQUIRE_POSTGRES=1, a failing one, and returns undefined.
export async function requirePostgresOrSkip(suite: string): Promise<string | undefined> {
  const url = testPostgresUrl();
  const reason = await postgresUnreachableReason(url);
  if (!reason) return url;
  if (process.env.TOLLROUTE_REQUIRE_POSTGRES === '1') {
    test(`${suite}: PostgreSQL is reachable (TOLLROUTE_REQUIRE_POSTGRES=1)`, () => {
      throw new Error(reason);
    });
  } else {
    console.log(`skipping ${suite}: ${reason}`);
    test(suite, { skip: reason }, () => {});
  }
  return undefined;
}

// A fresh schema name in the store URL (`?schema=t_…`); openStore creates it.
export function withTestSchema(baseUrl: string): { url: string; schema: string } {
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const url = new URL(baseUrl);
  url.searchParams.set('schema', schema);
  return { url: url.toString(), schema };
}

export async function dropTestSchemas(baseUrl: string, schemas: string[]): Promise<void> {
  if (schemas.length === 0) return;
  const client = new pg.Client({ connectionString: baseUrl });
  await client.connect();
  try {
    for (const schema of schemas) await client.query(`drop schema if exists "${schema}" cascade`);
  } finally {
    await client.end();
  }
}

/** Fresh schemas (each store URL and schema name), one per call, every one dropped after the file's tests. */
export function freshSchemas(baseUrl: string): () => { url: string; schema: string } {
  const schemas: string[] = [];
  after(() => dropTestSchemas(baseUrl, schemas));
  return () => {
    const fresh = withTestSchema(baseUrl);
    schemas.push(fresh.schema);
    return fresh;
  };
}

/**
 * Store URLs for the store contracts: a fresh schema on every call, and `reused()`, a migrated schema
 * a finished test gave back (`giveBack`), emptied, or a fresh one when none is. Migrating a fresh
 * schema takes about 0.3 s; emptying one about 20 ms. Every schema is dropped after the file's tests.
 */
export interface SchemaUrls extends StoreUrls {
  reused(): string;
  giveBack(url: string): Promise<void>;
}

export function freshSchemaUrls(baseUrl: string): SchemaUrls {
  const nextSchema = freshSchemas(baseUrl);
  const emptied: string[] = [];
  let client: pg.Client | undefined;
  /** The tables' definitions of a schema just migrated, the first time one is given back. */
  let migratedShape: string | undefined;
  after(() => client?.end());

  const fresh = () => nextSchema().url;
  async function giveBack(url: string) {
    const schema = new URL(url).searchParams.get('schema')!;
    client ??= await connected(baseUrl);
    if (migratedShape === undefined) {
      // Measured on a schema no test has used: a fresh one, migrated, which then joins the emptied.
      const template = nextSchema();
      await (await openStore(template.url)).close();
      migratedShape = await shapeOf(client, template.schema);
      emptied.push(template.url);
    }
    // A schema a test altered stays out of use (and is dropped with the rest).
    if ((await shapeOf(client, schema)) !== migratedShape) return;
    if (await emptySchema(client, schema)) emptied.push(url);
  }
  return Object.assign(fresh, { reused: () => emptied.pop() ?? fresh(), giveBack });
}

async function connected(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return client;
}

/** The schema's tables, columns, indexes, constraints and views as text, its own name left out. */
async function shapeOf(client: pg.Client, schema: string): Promise<string> {
  const { rows } = await client.query<{ shape: string }>(
    `select string_agg(line, E'\n' order by line) as shape from (
       select concat_ws(' ', c.relname, c.relkind, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull, pg_get_expr(d.adbin, d.adrelid)) as line
         from pg_class c join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
         left join pg_attrdef d on d.adrelid = c.oid and d.adnum = a.attnum
        where c.relnamespace = $1::regnamespace
       union all select pg_get_indexdef(i.indexrelid) from pg_index i join pg_class c on c.oid = i.indrelid where c.relnamespace = $1::regnamespace
       union all select concat_ws(' ', conname, pg_get_constraintdef(oid)) from pg_constraint where connamespace = $1::regnamespace
       union all select pg_get_triggerdef(t.oid) from pg_trigger t join pg_class c on c.oid = t.tgrelid
        where c.relnamespace = $1::regnamespace and not t.tgisinternal
       union all select concat_ws(' ', c.relname, pg_get_viewdef(c.oid)) from pg_class c where c.relnamespace = $1::regnamespace and c.relkind = 'v'
     ) lines`,
    [schema],
  );
  return (rows[0]?.shape ?? '').replaceAll(`${schema}.`, '');
}

/**
 * Deletes every row but the migrations' own and restarts the sequences, as a fresh schema has them;
 * false when it cannot (a lock still held, or no right to skip the foreign keys' checks).
 */
async function emptySchema(client: pg.Client, schema: string): Promise<boolean> {
  const { rows } = await client.query<{ statements: string }>(
    `select string_agg(statement, '; ') as statements from (
       select format('delete from %I.%I', schemaname, tablename) as statement from pg_tables
        where schemaname = $1 and tablename not like 'kysely_migration%'
       union all select format('alter sequence %I.%I restart', schemaname, sequencename) from pg_sequences where schemaname = $1
     ) statements`,
    [schema],
  );
  try {
    // Replica mode skips the foreign keys' triggers, so the tables empty in any order.
    await client.query(`begin; set local lock_timeout = '1s'; set local session_replication_role = replica; ${rows[0]!.statements}; commit`);
    return true;
  } catch {
    await client.query('rollback').catch(() => {});
    return false;
  }
}
