// Queries on `ledger`: append-only movements of money, one or more per money step.
// An account's rows are found by its index on PostgreSQL, by their chain on SQLite (ledger-chain.ts:
// each row names the account's previous one, the account its latest).
import { type Insertable, type Kysely, type RawBuilder, type Selectable, sql } from 'kysely';
import { chainLedgerRowIn, isSqlite, lastLedgerRowOf } from './ledger-chain.js';
import type { Dialect } from './migrations.js';
import type { DB, LedgerTable } from './schema.js';

export type LedgerRow = Selectable<LedgerTable>;

const COLUMNS = ['id', 'account_id', 'kind', 'balance_delta_micros', 'held_delta_micros', 'hold_id', 'request_id', 'model', 'note', 'created_at'] as const;

/** The store a ledger read runs on (a transaction's `db` will do). */
export interface LedgerReader {
  db: Kysely<DB>;
  dialect: Dialect;
}

/** Appends a row; on SQLite it joins its account's chain, in a transaction of its own unless `db` is one. */
export async function insertLedgerRow(db: Kysely<DB>, row: Insertable<LedgerTable>): Promise<LedgerRow> {
  if (!isSqlite(db)) return db.insertInto('ledger').values(row).returning(COLUMNS).executeTakeFirstOrThrow();
  if (!db.isTransaction) return db.transaction().execute((trx) => insertLedgerRow(trx, row));
  const chained = { ...row, prev_id: lastLedgerRowOf(row.account_id) } as Insertable<LedgerTable>; // prev_id: SQLite's column alone
  const inserted = await db.insertInto('ledger').values(chained).returning(COLUMNS).executeTakeFirstOrThrow();
  await chainLedgerRowIn(db, row.account_id, inserted.id);
  return inserted;
}

/** SQLite: the ids of an account's rows, newest first, by following the chain from the account row.
 * Read with `chain cross join ledger`: SQLite then walks the chain and looks each row up by id,
 * where a plain join let it scan the whole ledger in id order to skip the sort.
 */
const chainOf = (accountId: string, limit?: number): RawBuilder<unknown> => sql`
  with recursive chain(id) as (
    select last_ledger_id from accounts where id = ${accountId} and last_ledger_id is not null
    union all
    select ledger.prev_id from ledger join chain on ledger.id = chain.id where ledger.prev_id is not null
    ${limit === undefined ? sql`` : sql`limit ${limit}`}
  )`;

// Newest first (by id: the order rows were written).
export async function listLedger({ db, dialect }: LedgerReader, { accountId, limit = 100 }: { accountId: string; limit?: number }): Promise<LedgerRow[]> {
  if (dialect === 'postgres') {
    return db.selectFrom('ledger').select(COLUMNS).where('account_id', '=', accountId).orderBy('id', 'desc').limit(limit).execute();
  }
  const { rows } = await sql<LedgerRow>`${chainOf(accountId, limit)}
    select ${sql.join(COLUMNS.map((column) => sql.ref(`ledger.${column}`)))} from chain cross join ledger on ledger.id = chain.id order by ledger.id desc`.execute(
    db,
  );
  return rows;
}

// SUM(bigint) is numeric on PostgreSQL, which pg returns as text: cast back to bigint.
export async function sumLedger({ db, dialect }: LedgerReader, accountId: string): Promise<{ balanceDeltaMicros: number; heldDeltaMicros: number }> {
  const sums = sql`select cast(coalesce(sum(balance_delta_micros), 0) as bigint) as balance, cast(coalesce(sum(held_delta_micros), 0) as bigint) as held`;
  // On SQLite the chain's CTE comes before the select, and the rows are those it names.
  const [chain, rowsOf] =
    dialect === 'postgres'
      ? [sql``, sql`from ledger where account_id = ${accountId}`]
      : [chainOf(accountId), sql`from chain cross join ledger on ledger.id = chain.id`];
  const { rows } = await sql<{ balance: number; held: number }>`${chain} ${sums} ${rowsOf}`.execute(db);
  const row = rows[0] ?? { balance: 0, held: 0 };
  return { balanceDeltaMicros: Number(row.balance), heldDeltaMicros: Number(row.held) };
}
