// What every money step shares: the bounds a micros amount must keep, and the ledger row that
// records a movement (DESIGN §3). The steps are in ledger.ts (holds) and accounts.ts (credits).
import { invalidRequest } from '../errors.js';

/**
 * The most an account's balance plus held funds may reach: the largest integer a JS number holds
 * exactly, so SQLite's INTEGER and PostgreSQL's BIGINT read back the same value (DESIGN §3).
 */
export const MAX_BALANCE_MICROS = Number.MAX_SAFE_INTEGER;

/** An amount the caller gave: a safe integer of micros, at least `min`; else a 400 naming the field. */
export function requireMicros(field: string, value: number, { min }: { min: number }): void {
  if (!Number.isSafeInteger(value)) throw invalidRequest(`${field}: expected an integer number of micros up to ${MAX_BALANCE_MICROS}, got ${value}`);
  if (value < min) throw invalidRequest(`${field}: expected at least ${min}, got ${value}`);
}

/** A movement as the ledger's row; `now` is given (tests pin it to compare whole rows). */
export function ledgerRow(m: {
  accountId: string;
  kind: 'credit' | 'hold' | 'settle' | 'release' | 'debit';
  balanceDelta: number;
  heldDelta?: number;
  holdId?: string;
  requestId?: string | null;
  model?: string;
  note?: string;
  now: number;
}) {
  return {
    account_id: m.accountId,
    kind: m.kind,
    balance_delta_micros: m.balanceDelta,
    held_delta_micros: m.heldDelta ?? 0,
    hold_id: m.holdId ?? null,
    request_id: m.requestId ?? null,
    model: m.model ?? null,
    note: m.note ?? null,
    created_at: m.now,
  };
}
