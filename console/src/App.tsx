// The console's frame: which page the address names, the navigation and sign-out around it, and
// the sign-in page whenever the gateway says the session is missing or over (401).
import { useEffect, useState } from 'preact/hooks';
import { type Account, ApiError, api, SIGNED_OUT } from './api';
import { Link } from './components/Link';
import { LowBalanceBanner } from './components/LowBalanceBanner';
import { Failure } from './components/Notice';
import { Operator } from './pages/admin/Operator';
import { Gallery } from './pages/Gallery';
import { Keys } from './pages/Keys';
import { Overview } from './pages/Overview';
import { Prices } from './pages/Prices';
import { Settings } from './pages/Settings';
import { SignIn } from './pages/SignIn';
import { Tasks } from './pages/Tasks';
import { TopUps } from './pages/TopUps';
import { Usage } from './pages/Usage';
import { navigate, type Route, useRoute } from './router';

const PAGES = { overview: Overview, keys: Keys, usage: Usage, tasks: Tasks, gallery: Gallery, topups: TopUps, prices: Prices, settings: Settings } as const;
const NAV: [Exclude<Route, 'login' | 'admin'>, string][] = [
  ['overview', 'Overview'],
  ['keys', 'Keys'],
  ['usage', 'Usage'],
  ['tasks', 'Tasks'],
  ['gallery', 'Gallery'],
  ['topups', 'Top-ups'],
  ['prices', 'Models and prices'],
  ['settings', 'Settings'],
];

export function App() {
  const route = useRoute();
  const [account, setAccount] = useState<Account>();
  const [error, setError] = useState<string>();
  const [round, setRound] = useState(0);

  // Whatever page learns that the session is over, the console goes back to signing in.
  useEffect(() => {
    const signedOut = () => {
      setAccount(undefined);
      navigate('login');
    };
    addEventListener(SIGNED_OUT, signedOut);
    return () => removeEventListener(SIGNED_OUT, signedOut);
  }, []);

  // Who is signed in: asked once per sign-in, not on every page change (a 401 signs out, above).
  useEffect(() => {
    // The operator's view signs in with the admin token, not a session: no account to ask for.
    if (route === 'login' || route === 'admin' || account) return;
    api<Account>('GET', '/v1/account').then(setAccount, (failure: unknown) => {
      if (!(failure instanceof ApiError && failure.status === 401)) setError(String(failure instanceof Error ? failure.message : failure));
    });
  }, [route, account, round]);

  useEffect(() => {
    document.title = route ? `${route === 'login' ? 'Sign in' : route[0]?.toUpperCase() + route.slice(1)} · tollroute console` : 'tollroute console';
  }, [route]);

  const signedIn = () => {
    setError(undefined);
    setRound((n) => n + 1);
  };
  if (route === 'login') return <SignIn onSignedIn={signedIn} />;
  if (route === 'admin') return <Operator />;

  const signOut = async () => {
    await api('DELETE', '/v1/account/session').catch(() => undefined);
    setAccount(undefined);
    navigate('login');
  };

  const Page = route ? PAGES[route] : undefined;
  return (
    <>
      <header>
        <nav aria-label="Console">
          <span class="brand">tollroute</span>
          {NAV.map(([to, label]) => (
            <Link key={to} to={to} current={route === to}>
              {label}
            </Link>
          ))}
        </nav>
        <div class="who">
          {account && <span>{account.name}</span>}
          <button type="button" onClick={signOut}>
            Sign out
          </button>
        </div>
      </header>
      <main>
        <Failure message={error} />
        {account && <LowBalanceBanner route={route} />}
        {account && (Page ? <Page /> : <p>No such page. Use the navigation above.</p>)}
      </main>
    </>
  );
}
