// An account's top-ups: its ledger rows of kind credit (operator credits, redeemed codes, card
// payments) and debit (a card payment refunded), newest first. They are read through the partial
// index ledger_topups (migration 026) on both dialects, not SQLite's chain of every row of the
// account: a busy account has millions of holds and settles between two credits.
import { type Kysely, sql } from 'kysely';
import type { DB } from './schema.js';

export interface TopUpRow {
  id: number;
  kind: string;
  balance_delta_micros: number;
  held_delta_micros: number;
  note: string | null;
  created_at: number;
}

/**
 * Up to `limit` rows, newest first (by id: the order they were written), older than the row
 * `beforeId` when given. The kinds are written as literals, the index's own condition: SQLite uses
 * a partial index only for a query whose condition is written as the index's is.
 */
export async function listTopUpRows(
  db: Kysely<DB>,
  { accountId, beforeId, limit }: { accountId: string; beforeId?: number; limit: number },
): Promise<TopUpRow[]> {
  const older = beforeId === undefined ? sql`` : sql`and id < ${beforeId}`;
  const { rows } = await sql<TopUpRow>`
    select id, kind, balance_delta_micros, held_delta_micros, note, created_at from ledger
    where account_id = ${accountId} and kind in ('credit', 'debit') ${older}
    order by id desc limit ${limit}`.execute(db);
  return rows;
}
