// Every account, newest first, 50 to a page, with a search on the name. Opening one shows its detail.
import { useState } from 'preact/hooks';
import type { Account, Page } from '../../api';
import { Failure } from '../../components/Notice';
import { Pager } from '../../components/Pager';
import { formatTime } from '../../format';
import { formatMicros } from '../../money';
import { usePages } from '../../use-pages';
import type { Admin } from './admin-api';

export function Accounts({ admin, onOpen }: { admin: Admin; onOpen: (id: string) => void }) {
  const [typed, setTyped] = useState('');
  const [name, setName] = useState<string>();
  const pages = usePages<Account>('/admin/accounts', { name }, { get: (url) => admin.get<Page<Account>>(url) });
  const { page, error, loading } = pages;

  const search = (event: Event) => {
    event.preventDefault();
    setName(typed.trim() || undefined);
  };

  return (
    <>
      <h1>Accounts</h1>
      <form class="inline" onSubmit={search}>
        <label for="account-search">Search by name</label>
        <input id="account-search" type="search" maxLength={200} value={typed} onInput={(event) => setTyped(event.currentTarget.value)} />
        <button type="submit">Search</button>
      </form>
      <Failure message={error} />
      {page && page.data.length === 0 && <p>{name ? `No account’s name contains “${name}”.` : 'No accounts yet.'}</p>}
      {page && page.data.length > 0 && (
        <div class="table" aria-busy={loading}>
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col" class="number">
                  Balance
                </th>
                <th scope="col" class="number">
                  Held
                </th>
                <th scope="col" class="number">
                  Overdraft
                </th>
                <th scope="col">Created</th>
                <th scope="col">Id</th>
              </tr>
            </thead>
            <tbody>
              {page.data.map((account) => (
                <tr key={account.id} data-account-id={account.id}>
                  <td>
                    <button type="button" class="link" onClick={() => onOpen(account.id)} aria-label={`Open account ${account.name} (${account.id})`}>
                      {account.name}
                    </button>
                  </td>
                  <td class="number">{formatMicros(account.balance_micros)}</td>
                  <td class="number">{formatMicros(account.held_micros)}</td>
                  <td class="number">{formatMicros(account.overdraft_micros)}</td>
                  <td>{formatTime(account.created_at)}</td>
                  <td>
                    <code>{account.id}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager pages={pages} label="Account pages" />
    </>
  );
}
