// The banner every signed-in page shows while the account's funds are below its low-balance
// threshold. Read again on each change of page, so a balance that fell (or a top-up) shows there.
import { useEffect, useState } from 'preact/hooks';
import { type Account, api } from '../api';
import { formatMicros } from '../money';
import type { Route } from '../router';
import { Link } from './Link';
import '../low-balance.css';

export function LowBalanceBanner({ route }: { route: Route | undefined }) {
  const [account, setAccount] = useState<Account>();
  useEffect(() => {
    let current = true;
    // A failure here is the page's own to show (the frame reads the same account): no banner then.
    api<Account>('GET', '/v1/account').then(
      (answer) => current && setAccount(answer),
      () => current && setAccount(undefined),
    );
    return () => {
      current = false;
    };
  }, [route]);
  if (!account?.balance_low || account.low_balance_micros === null) return null;
  return (
    <section class="low-balance" role="status" aria-label="Low balance">
      <strong>Low balance:</strong> {formatMicros(account.balance_micros)} available, below the threshold of {formatMicros(account.low_balance_micros)}.{' '}
      <Link to="topups">Top up</Link> or change the threshold in <Link to="settings">Settings</Link>.
    </section>
  );
}
