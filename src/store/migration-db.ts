import type { Kysely } from 'kysely';

/**
 * The database as a migration sees it: the schema of that step, which no table type of today's
 * describes (tables and columns come and go along the way), so its rows are untyped.
 */
// biome-ignore lint/suspicious/noExplicitAny: a migration's schema is the one of its step, not today's DB type.
export type MigrationDb = Kysely<any>;
