// Sign-in: a link the operator issued leaves its token in the fragment (#token=…, never sent to a
// server), which is posted at once; or the holder pastes an API key. The API's refusal (a used or
// expired link, a wrong or revoked key) is shown in its own words.
import { useEffect, useState } from 'preact/hooks';
import { ApiError, api } from '../api';
import { Failure } from '../components/Notice';
import { navigate } from '../router';

const SESSION = '/v1/account/session';

function takeTokenFromFragment(): string | undefined {
  const token = new URLSearchParams(location.hash.slice(1)).get('token') ?? undefined;
  // Out of the address bar and the history at once: the token is good once and is nobody's to see.
  if (token !== undefined) history.replaceState(null, '', location.pathname);
  return token;
}

export function SignIn({ onSignedIn }: { onSignedIn: () => void }) {
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [key, setKey] = useState('');

  const signIn = async (body: { login_token: string } | { api_key: string }) => {
    setBusy(true);
    setError(undefined);
    try {
      await api('POST', SESSION, body);
      onSignedIn();
      navigate('overview');
    } catch (failure) {
      setError(failure instanceof ApiError ? failure.message : String(failure));
    } finally {
      setBusy(false);
    }
  };

  useEffect(() => {
    const token = takeTokenFromFragment();
    if (token !== undefined) void signIn({ login_token: token });
  }, []);

  const submit = (event: Event) => {
    event.preventDefault();
    void signIn({ api_key: key.trim() });
  };

  return (
    <main class="sign-in">
      <h1>Sign in to tollroute</h1>
      <p>Open the sign-in link your operator gave you, or sign in with one of your API keys.</p>
      <Failure message={error} />
      {busy && <p role="status">Signing in…</p>}
      <form onSubmit={submit}>
        <label for="api-key">API key</label>
        <input
          id="api-key"
          name="api-key"
          type="password"
          autocomplete="off"
          placeholder="tr-…"
          required
          value={key}
          onInput={(event) => setKey(event.currentTarget.value)}
        />
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
    </main>
  );
}
