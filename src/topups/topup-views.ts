// Top-ups and redemption batches as the API answers them, and the top-ups CSV.
import { csvLine } from '../account/csv.js';
import { iso } from '../admin/views.js';
import type { RedemptionBatchRow } from '../store/redemption-codes.js';
import type { TopUpRow } from '../store/topup-rows.js';

/** What a ledger row without a note was: credits without one come from the operator (admin API, CLI, opening credit). */
const describe = (row: TopUpRow): string => row.note ?? (row.kind === 'credit' ? 'operator credit' : 'debit');

export const topUpView = (row: TopUpRow) => ({
  id: row.id,
  kind: row.kind,
  // What the row did to balance + held; a top-up moves the balance alone.
  amount_micros: row.balance_delta_micros + row.held_delta_micros,
  note: row.note,
  description: describe(row),
  created_at: iso(row.created_at),
});

const TOPUP_CSV_COLUMNS = ['id', 'created_at', 'kind', 'amount_micros', 'description'] as const;

export const TOPUP_CSV_HEADER = csvLine(TOPUP_CSV_COLUMNS);

export function topUpCsvLine(row: TopUpRow): string {
  const view = topUpView(row);
  return csvLine(TOPUP_CSV_COLUMNS.map((column) => view[column]));
}

export const redemptionBatchView = (batch: RedemptionBatchRow & { redeemed?: number }) => ({
  id: batch.id,
  name: batch.name,
  amount_micros: batch.amount_micros,
  count: batch.count,
  redeemed: batch.redeemed ?? 0,
  expires_at: batch.expires_at === null ? null : iso(batch.expires_at),
  created_at: iso(batch.created_at),
});
