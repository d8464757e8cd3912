import { after } from 'node:test';
import { dropTestSchemas, requirePostgresOrSkip, withTestSchema } from '../helpers/postgres.js';
import { runOutboxContract } from './outbox-contract.js';

const baseUrl = await requirePostgresOrSkip('PostgreSQL webhook outbox tests');
if (baseUrl) {
  const schemas: string[] = [];
  after(() => dropTestSchemas(baseUrl, schemas));
  runOutboxContract('PostgreSQL', () => {
    const { url, schema } = withTestSchema(baseUrl);
    schemas.push(schema);
    return url;
  });
}
