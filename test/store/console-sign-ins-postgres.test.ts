import { freshSchemaUrls, requirePostgresOrSkip } from '../helpers/postgres.js';
import { runConsoleSignInsContract } from './console-sign-ins-contract.js';

const baseUrl = await requirePostgresOrSkip('PostgreSQL console sign-in tests');
if (baseUrl) runConsoleSignInsContract('PostgreSQL', freshSchemaUrls(baseUrl));
