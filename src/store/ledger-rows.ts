// Queries on `ledger`: append-only movements of money, one or more per money step.
import { type Insertable, type Kysely, type Selectable, sql } from 'kysely';
import type { DB, LedgerTable } from './schema.js';

export type LedgerRow = Selectable<LedgerTable>;

const COLUMNS = ['id', 'account_id', 'kind', 'balance_delta_micros', 'held_delta_micros', 'hold_id', 'request_id', 'model', 'note', 'created_at'] as const;

export async function insertLedgerRow(db: Kysely<DB>, row: Insertable<LedgerTable>): Promise<LedgerRow> {
  return db.insertInto('ledger').values(row).returning(COLUMNS).executeTakeFirstOrThrow();
}

// Newest first (by id: the order rows were written).
export async function listLedger(db: Kysely<DB>, { accountId, limit = 100 }: { accountId: string; limit?: number }): Promise<LedgerRow[]> {
  return db.selectFrom('ledger').select(COLUMNS).where('account_id', '=', accountId).orderBy('id', 'desc').limit(limit).execute();
}

// SUM(bigint) is numeric on PostgreSQL, which pg returns as text: cast back to bigint.
export async function sumLedger(db: Kysely<DB>, accountId: string): Promise<{ balanceDeltaMicros: number; heldDeltaMicros: number }> {
  const row = await db
    .selectFrom('ledger')
    .select([
      sql<number>`cast(coalesce(sum(balance_delta_micros), 0) as bigint)`.as('balance'),
      sql<number>`cast(coalesce(sum(held_delta_micros), 0) as bigint)`.as('held'),
    ])
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  return { balanceDeltaMicros: Number(row.balance), heldDeltaMicros: Number(row.held) };
}
