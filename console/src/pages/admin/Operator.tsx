// The operator's view at /dashboard/admin: the admin token first (TokenForm), then accounts, one
// account's detail, and the channels. Which of those shows is this page's own state, not the
// address: the view is one page of the console's router, and a reload comes back to the list.
import { useMemo, useState } from 'preact/hooks';
import { AccountDetail } from './AccountDetail';
import { Accounts } from './Accounts';
import { bindAdmin, forgetToken, savedToken } from './admin-api';
import { Channels } from './Channels';
import { TOKEN_NO_LONGER_ACCEPTED } from './messages';
import { TokenForm } from './TokenForm';

type View = { page: 'accounts' } | { page: 'account'; id: string } | { page: 'channels' };

export function Operator() {
  const [token, setToken] = useState(savedToken);
  const [refused, setRefused] = useState<string>();
  const [view, setView] = useState<View>({ page: 'accounts' });

  const signOut = (why?: string) => {
    forgetToken();
    setToken(undefined);
    setRefused(why);
  };
  const admin = useMemo(() => token && bindAdmin(token, () => signOut(TOKEN_NO_LONGER_ACCEPTED)), [token]);

  if (!admin) {
    return (
      <TokenForm
        notice={refused}
        onAccepted={(accepted) => {
          setRefused(undefined);
          setView({ page: 'accounts' });
          setToken(accepted);
        }}
      />
    );
  }

  const tab = (page: 'accounts' | 'channels', label: string) => (
    <button
      type="button"
      class="tab"
      aria-current={view.page === page || (page === 'accounts' && view.page === 'account') ? 'page' : undefined}
      onClick={() => setView({ page })}
    >
      {label}
    </button>
  );
  return (
    <>
      <header>
        <nav aria-label="Operator">
          <span class="brand">tollroute operator</span>
          {tab('accounts', 'Accounts')}
          {tab('channels', 'Channels')}
        </nav>
        <div class="who">
          <button type="button" onClick={() => signOut()}>
            Forget admin token
          </button>
        </div>
      </header>
      <main>
        {view.page === 'accounts' && <Accounts admin={admin} onOpen={(id) => setView({ page: 'account', id })} />}
        {view.page === 'account' && <AccountDetail admin={admin} id={view.id} onBack={() => setView({ page: 'accounts' })} />}
        {view.page === 'channels' && <Channels admin={admin} />}
      </main>
    </>
  );
}
