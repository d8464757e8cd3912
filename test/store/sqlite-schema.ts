// What a SQLite store's schema says of one table, for the tests of migrations that rebuild tables
// or change their indexes.
import { type Kysely, sql } from 'kysely';

/** The table's create statement, or '' when there is no such table. */
export async function tableSql(db: Kysely<any>, table: string): Promise<string> {
  const { rows } = await sql<{ sql: string }>`select sql from sqlite_master where type = 'table' and name = ${table}`.execute(db);
  return rows[0]?.sql ?? '';
}

/** The names of the indexes made for the table (not SQLite's own key indexes), in name order. */
export async function indexNames(db: Kysely<any>, table: string): Promise<string[]> {
  const { rows } = await sql<{
    name: string;
  }>`select name from sqlite_master where type = 'index' and tbl_name = ${table} and sql is not null order by name`.execute(db);
  return rows.map((row) => row.name);
}

/** The create statements of the table's indexes and triggers, in name order. */
export async function indexesAndTriggers(db: Kysely<any>, table: string): Promise<string[]> {
  const { rows } = await sql<{
    sql: string;
  }>`select sql from sqlite_master where type in ('index', 'trigger') and tbl_name = ${table} and sql is not null order by name`.execute(db);
  return rows.map((row) => row.sql);
}

/**
 * Drops the connection's temp views and triggers (the hot ledger's step triggers). A migration test
 * takes an open store back to an older schema, as an older version would have left it, and SQLite
 * checks every trigger that names an altered table, temp ones included.
 */
export async function dropTempObjects(db: Kysely<any>): Promise<void> {
  const { rows } = await sql<{ type: string; name: string }>`select type, name from sqlite_temp_master where type in ('trigger', 'view') order by type`.execute(
    db,
  );
  for (const { type, name } of rows) await sql.raw(`drop ${type} if exists temp.${name}`).execute(db);
}
