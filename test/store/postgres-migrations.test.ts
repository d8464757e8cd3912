// Opening a store migrates it; other clients of the same database (other test runs, other tenants'
// schemas) creating and dropping schemas meanwhile must not make that fail.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import pg from 'pg';
import { openStore } from '../../src/store/open.js';
import { dropTestSchemas, requirePostgresOrSkip, withTestSchema } from '../helpers/postgres.js';

const baseUrl = await requirePostgresOrSkip('PostgreSQL migrations');
if (baseUrl) {
  const schemas: string[] = [];
  after(() => dropTestSchemas(baseUrl, schemas));

  test('stores open and reopen while another client keeps creating and dropping schemas', async () => {
    const churn = new pg.Client({ connectionString: baseUrl });
    await churn.connect();
    let churning = true;
    const churned = (async () => {
      for (let i = 0; churning; i++) {
        const name = `churn_${process.pid}_${i}`;
        await churn.query(`create schema "${name}"`);
        await churn.query(`create table "${name}".t (id serial primary key)`);
        await churn.query(`drop schema "${name}" cascade`);
      }
    })();
    try {
      const opened = await Promise.allSettled(
        Array.from({ length: 12 }, async () => {
          const { url, schema } = withTestSchema(baseUrl);
          schemas.push(schema);
          await (await openStore(url)).close();
          await (await openStore(url)).close(); // a restart: already migrated
        }),
      );
      assert.deepEqual(
        opened.filter((o) => o.status === 'rejected').map((o) => String((o as PromiseRejectedResult).reason)),
        [],
      );
    } finally {
      churning = false;
      await churned;
      await churn.end();
    }
  });
}
