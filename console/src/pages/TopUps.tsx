// Top-ups: redeem a code, pay by card (when the gateway takes cards), and the account's top-ups with their ledger rows.
import { useState } from 'preact/hooks';
import { type Account, api } from '../api';
import { CardTopUp } from '../components/CardTopUp';
import { Failure } from '../components/Notice';
import { RedeemCodeForm } from '../components/RedeemCodeForm';
import { TopUpTable } from '../components/TopUpTable';
import { formatMicros } from '../money';
import { useLoad } from '../use-load';

export function TopUps() {
  const account = useLoad(() => api<Account>('GET', '/v1/account'));
  // A new round after each redemption: the balance is read again and the list starts over from its newest page.
  const [round, setRound] = useState(0);
  const redeemed = () => {
    account.reload();
    setRound((n) => n + 1);
  };
  return (
    <section>
      <h1>Top-ups</h1>
      <Failure message={account.error} />
      <section class="cards" aria-label="Balance">
        <div class="card">
          <h2>Balance</h2>
          <p class="figure" data-testid="balance">
            {account.data ? formatMicros(account.data.balance_micros) : '…'}
          </p>
        </div>
      </section>
      <RedeemCodeForm onRedeemed={redeemed} />
      <CardTopUp />
      <TopUpTable key={round} />
    </section>
  );
}
