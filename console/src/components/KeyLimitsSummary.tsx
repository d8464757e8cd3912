// A key's limits as its row in the Keys table shows them: the models it may call, its rate, each
// spend cap with what is spent (or held by calls running) so far, and its expiry.
import type { ApiKey } from '../api';
import { formatTime } from '../format';
import { isExpired } from '../key-limits';
import { formatMicros } from '../money';

function CapLine({ spent, cap, period }: { spent: number; cap: number; period: string }) {
  // The bar only draws the share; the text beside it says the amounts exactly.
  const share = Math.min(100, cap === 0 ? 100 : (spent / cap) * 100);
  return (
    <li>
      {formatMicros(spent)} of {formatMicros(cap)} {period}
      <span class={`bar${share >= 100 ? ' full' : ''}`} aria-hidden="true">
        <span style={{ width: `${share}%` }} />
      </span>
    </li>
  );
}

export function KeyLimitsSummary({ apiKey }: { apiKey: ApiKey }) {
  const { allowed_models: models, rpm, daily_cap_micros: daily, monthly_cap_micros: monthly, expires_at: expires, spend } = apiKey;
  return (
    <ul class="limits">
      <li>{models === null ? 'Any model' : `Models: ${models.join(', ')}`}</li>
      {rpm !== null && <li>{rpm} requests a minute</li>}
      {daily !== null && <CapLine spent={spend?.day_micros ?? 0} cap={daily} period="today" />}
      {monthly !== null && <CapLine spent={spend?.month_micros ?? 0} cap={monthly} period="this month" />}
      {expires !== null && <li>{isExpired(apiKey) ? <strong>Expired {formatTime(expires)}</strong> : `Expires ${formatTime(expires)}`}</li>}
    </ul>
  );
}
