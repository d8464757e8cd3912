// The operator pastes the admin token (admin_token in tollroute.yaml). It is tried on one admin
// read before it is kept, so a wrong token is refused here, in words, not on the next page.
import { useState } from 'preact/hooks';
import { ApiError, messageOf } from '../../api';
import { Failure } from '../../components/Notice';
import { adminApi, saveToken } from './admin-api';
import { TOKEN_REFUSED } from './messages';

export function TokenForm({ notice, onAccepted }: { notice: string | undefined; onAccepted: (token: string) => void }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    const candidate = token.trim();
    setBusy(true);
    setError(undefined);
    try {
      await adminApi(candidate, 'GET', '/admin/channels');
      saveToken(candidate);
      onAccepted(candidate);
    } catch (failure) {
      setError(failure instanceof ApiError && failure.status === 401 ? TOKEN_REFUSED : messageOf(failure));
    } finally {
      setBusy(false);
    }
  };

  return (
    <main class="sign-in">
      <h1>Operator sign-in</h1>
      <p>
        Paste the gateway’s admin token. It stays in this browser tab only (sent as <code>Authorization: Bearer</code>, never a cookie) and is forgotten when
        the tab closes.
      </p>
      <Failure message={error ?? notice} />
      <form onSubmit={submit}>
        <label for="admin-token">Admin token</label>
        <input id="admin-token" type="password" autocomplete="off" required value={token} onInput={(event) => setToken(event.currentTarget.value)} />
        <button type="submit" disabled={busy}>
          {busy ? 'Checking…' : 'Open the operator view'}
        </button>
      </form>
    </main>
  );
}
