// How accounts, keys, ledger rows and usage records look over the admin API (money in *_micros).
import type { Price } from '../config/schema.js';
import type { AccountRow } from '../store/accounts.js';
import type { LedgerRow } from '../store/ledger-rows.js';
import type { UsageRow } from '../store/usage.js';

export const iso = (ms: number) => new Date(ms).toISOString();

export const accountView = (a: AccountRow) => ({
  id: a.id,
  name: a.name,
  balance_micros: a.balance_micros,
  held_micros: a.held_micros,
  overdraft_micros: a.overdraft_micros,
  created_at: iso(a.created_at),
});

export const ledgerView = (row: LedgerRow) => ({
  id: row.id,
  kind: row.kind,
  // What the row did to the account's total (balance + held), and how it moved between the two.
  amount_micros: row.balance_delta_micros + row.held_delta_micros,
  balance_delta_micros: row.balance_delta_micros,
  held_delta_micros: row.held_delta_micros,
  hold_id: row.hold_id,
  request_id: row.request_id,
  model: row.model,
  note: row.note,
  created_at: iso(row.created_at),
});

/**
 * `livemode` is the account's (false on a test twin): a usage row belongs to one account, and every
 * list of them is one account's, so the mode comes with the list, not from a column on each row.
 */
export const usageView = (row: UsageRow, livemode: boolean) => ({
  id: row.id,
  model: row.model,
  endpoint: row.endpoint,
  units: JSON.parse(row.units) as Record<string, number>,
  // The price list the units were billed at, taken when the call's hold was made; null when not known.
  prices: row.prices === null ? null : (JSON.parse(row.prices) as Price),
  amount_micros: row.amount_micros,
  // Usage beyond the hold plus overdraft: recorded, never taken (DESIGN §3).
  unbilled_micros: row.unbilled_micros,
  flags: row.flags,
  request_id: row.request_id,
  client_request_id: row.client_request_id,
  key_id: row.key_id,
  hold_id: row.hold_id,
  upstream_ms: row.upstream_ms,
  channel: row.channel,
  attempts: row.attempts,
  livemode,
  created_at: iso(row.created_at),
});
