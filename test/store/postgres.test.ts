import { after } from 'node:test';
import { dropTestSchemas, requirePostgresOrSkip, withTestSchema } from '../helpers/postgres.js';
import { runStoreContract } from './contract.js';

const baseUrl = await requirePostgresOrSkip('PostgreSQL store tests');
if (baseUrl) {
  const schemas: string[] = [];
  after(() => dropTestSchemas(baseUrl, schemas));
  runStoreContract('PostgreSQL', () => {
    const { url, schema } = withTestSchema(baseUrl);
    schemas.push(schema);
    return url;
  });
}
