// Finding the test PostgreSQL, and a throwaway schema per test so runs never see each other.
import { randomBytes } from 'node:crypto';
import { after, test } from 'node:test';
import pg from 'pg';

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

/** Store URLs on fresh schemas, one per call, every one dropped after the file's tests (for the store contracts). */
export function freshSchemaUrls(baseUrl: string): () => string {
  const nextSchema = freshSchemas(baseUrl);
  return () => nextSchema().url;
}
