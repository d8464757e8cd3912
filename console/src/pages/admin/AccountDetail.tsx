// One account: its funds, a credit form, its keys and its sign-in links.
import type { Account } from '../../api';
import { Failure } from '../../components/Notice';
import { formatTime } from '../../format';
import { formatMicros } from '../../money';
import { useLoad } from '../../use-load';
import { AccountKeys } from './AccountKeys';
import { type Admin, accountPath } from './admin-api';
import { CreditForm } from './CreditForm';
import { LoginLinks } from './LoginLinks';

export function AccountDetail({ admin, id, onBack }: { admin: Admin; id: string; onBack: () => void }) {
  const { data: account, error, reload } = useLoad(() => admin.get<Account>(accountPath(id)), [id]);
  const card = (title: string, micros: number | undefined, testId: string) => (
    <div class="card">
      <h2>{title}</h2>
      <p class="figure" data-testid={testId}>
        {micros === undefined ? '…' : formatMicros(micros)}
      </p>
    </div>
  );

  return (
    <>
      <button type="button" onClick={onBack}>
        ← All accounts
      </button>
      <h1>{account ? account.name : 'Account'}</h1>
      <p>
        <code>{id}</code>
        {account && ` · created ${formatTime(account.created_at)}`}
      </p>
      <Failure message={error} />
      <div class="cards">
        {card('Balance', account?.balance_micros, 'admin-balance')}
        {card('Held by running calls', account?.held_micros, 'admin-held')}
        {card('Overdraft allowed', account?.overdraft_micros, 'admin-overdraft')}
      </div>
      <CreditForm admin={admin} id={id} onCredited={reload} />
      <AccountKeys admin={admin} id={id} />
      <LoginLinks admin={admin} id={id} />
    </>
  );
}
