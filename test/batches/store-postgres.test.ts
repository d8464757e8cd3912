import { freshSchemaUrls, requirePostgresOrSkip } from '../helpers/postgres.js';
import { runBatchStoreContract } from './store-contract.js';

const baseUrl = await requirePostgresOrSkip('PostgreSQL batch store tests');
if (baseUrl) runBatchStoreContract('PostgreSQL', freshSchemaUrls(baseUrl));
