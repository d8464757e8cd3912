import { freshSchemaUrls, requirePostgresOrSkip } from '../helpers/postgres.js';
import { runAccountQueriesContract } from './account-queries-contract.js';

const baseUrl = await requirePostgresOrSkip('PostgreSQL account query tests');
if (baseUrl) runAccountQueriesContract('PostgreSQL', freshSchemaUrls(baseUrl));
