import { freshSchemaUrls, requirePostgresOrSkip } from '../helpers/postgres.js';
import { runOutboxContract } from './outbox-contract.js';

const baseUrl = await requirePostgresOrSkip('PostgreSQL webhook outbox tests');
if (baseUrl) runOutboxContract('PostgreSQL', freshSchemaUrls(baseUrl));
