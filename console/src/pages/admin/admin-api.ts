// How the operator's view reaches the admin API: the admin token as `Authorization: Bearer`, never a
// cookie. A browser never attaches that header by itself, so another site's page cannot make these
// requests on the operator's behalf (no CSRF). The token lives in this tab's sessionStorage only:
// it survives a reload, and is gone when the tab closes.
import { ApiError } from '../../api';

const STORAGE_KEY = 'tollroute.admin-token';

export const savedToken = (): string | undefined => sessionStorage.getItem(STORAGE_KEY) ?? undefined;
export const saveToken = (token: string) => sessionStorage.setItem(STORAGE_KEY, token);
export const forgetToken = () => sessionStorage.removeItem(STORAGE_KEY);

/** The admin API's answer, or an ApiError in its own words (401: the token is wrong). */
export async function adminApi<T>(token: string, method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<T> {
  const response = await fetch(path, {
    method,
    credentials: 'omit',
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const answer = await response.json().catch(() => undefined);
  if (!response.ok) throw new ApiError(response.status, typeof answer?.error === 'string' ? answer.error : `the gateway answered ${response.status}`);
  return answer as T;
}

/** The admin API bound to one token, as the operator's pages use it. */
export interface Admin {
  get<T>(path: string): Promise<T>;
  post<T>(path: string, body?: unknown): Promise<T>;
  del<T>(path: string): Promise<T>;
}

/** `onRefused` runs when the gateway refuses the token (it was changed, or mistyped at sign-in). */
export function bindAdmin(token: string, onRefused: () => void): Admin {
  const call = async <T>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown) => {
    try {
      return await adminApi<T>(token, method, path, body);
    } catch (failure) {
      if (failure instanceof ApiError && failure.status === 401) onRefused();
      throw failure;
    }
  };
  return { get: (path) => call('GET', path), post: (path, body) => call('POST', path, body ?? {}), del: (path) => call('DELETE', path) };
}

export const accountPath = (id: string, rest = '') => `/admin/accounts/${encodeURIComponent(id)}${rest}`;

// ---- what the admin API answers (README "Operator view" and the admin API table)

export interface LoginLink {
  id: string;
  created_at: string;
  expires_at: string;
  used_at: string | null;
  state: 'unused' | 'used' | 'expired';
}

/** A circuit breaker's state; a channel may also be disabled by the operator. */
export type CircuitState = 'closed' | 'open' | 'half_open';
export type ChannelState = CircuitState | 'disabled';

/** One upstream key of a channel, named by its fingerprint (never the key). */
export interface ChannelKey {
  key: string;
  state: CircuitState;
  requests: number;
  error_rate: number;
  rested_until: string | null;
}

export interface Channel {
  name: string;
  kind: string;
  origin: string;
  models: string[];
  connections: { limit: number; in_flight: number; waiting: number };
  connection_wait_ms: number;
  state: ChannelState;
  opens_until: string | null;
  /** Attempts in the window (the last 100 within the last minute). */
  requests: number;
  /** Failed attempts over attempts in the window, 0 to 1. */
  error_rate: number;
  latency_ms: { p50: number | null; p99: number | null };
  last_error: { message: string; at: string } | null;
  keys: ChannelKey[];
}

export interface Channels {
  data: Channel[];
  rate_limiter: { shared: boolean; degraded: boolean };
  store: { writable: boolean };
}
