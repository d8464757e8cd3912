// How the low-balance state looks over the account API and the admin API.
import { iso } from '../admin/views.js';
import { isBalanceLow } from '../billing/low-balance.js';
import type { LowBalanceRow } from '../store/low-balance.js';

const since = (row: LowBalanceRow) => (row.low_balance_since === null ? null : iso(row.low_balance_since));

/** The account holder's settings (GET and PATCH /v1/account/settings). */
export const lowBalanceSettingsView = (row: LowBalanceRow) => ({
  low_balance_micros: row.low_balance_micros,
  webhook_url: row.webhook_url,
  balance_low: isBalanceLow(row),
  low_balance_since: since(row),
});

/** An account's low-balance state for the operator; no webhook URL (it may carry the receiver's token). */
export const lowBalanceAccountView = (row: LowBalanceRow) => ({
  id: row.id,
  name: row.name,
  balance_micros: row.balance_micros,
  held_micros: row.held_micros,
  low_balance_micros: row.low_balance_micros,
  balance_low: isBalanceLow(row),
  low_balance_since: since(row),
});
