// A small client-side router under /dashboard: links change the history, the gateway answers
// index.html on every /dashboard path, so a reload or a shared address opens the same page.
import { useEffect, useState } from 'preact/hooks';

export const BASE = '/dashboard';

// `admin` is the operator's view (pages/admin/): the admin token, not an account's session.
export type Route = 'overview' | 'keys' | 'usage' | 'tasks' | 'gallery' | 'topups' | 'prices' | 'settings' | 'login' | 'admin';

const ROUTES: Record<string, Route> = {
  '': 'overview',
  login: 'login',
  keys: 'keys',
  usage: 'usage',
  tasks: 'tasks',
  gallery: 'gallery',
  topups: 'topups',
  prices: 'prices',
  settings: 'settings',
  admin: 'admin',
};

export function routeOf(pathname: string): Route | undefined {
  const rest = pathname.startsWith(BASE) ? pathname.slice(BASE.length) : pathname;
  return ROUTES[rest.replace(/^\/+|\/+$/g, '')];
}

export const pathOf = (route: Route) => (route === 'overview' ? `${BASE}/` : `${BASE}/${route}`);

export function navigate(route: Route): void {
  history.pushState(null, '', pathOf(route));
  dispatchEvent(new PopStateEvent('popstate'));
}

export function useRoute(): Route | undefined {
  const [route, setRoute] = useState(() => routeOf(location.pathname));
  useEffect(() => {
    const update = () => setRoute(routeOf(location.pathname));
    addEventListener('popstate', update);
    return () => removeEventListener('popstate', update);
  }, []);
  return route;
}
