import { freshSchemaUrls, requirePostgresOrSkip } from '../helpers/postgres.js';
import { runStoreContract } from './contract.js';

const baseUrl = await requirePostgresOrSkip('PostgreSQL store tests');
if (baseUrl) runStoreContract('PostgreSQL', freshSchemaUrls(baseUrl));
