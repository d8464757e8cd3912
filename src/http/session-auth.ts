// The account API's own authentication: an API key, exactly as on every /v1 call, or else the
// account console's session cookie. Only the account routes use it (server.ts): the metered calls
// keep apiKeyHook alone and never look at a cookie. Cookie requests that change something must
// come from the gateway's own pages (a browser sends the cookie wherever a request comes from).
import type { CookieSerializeOptions } from '@fastify/cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { checkSession } from '../console/sessions.js';
import { auth, forbidden } from '../errors.js';
import type { Store } from '../store/open.js';
import { apiKeyHook, failedAuthentication, sendsKeyHeader } from './auth.js';
import type { KeyResolver } from './key-resolver.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The console session the request came with; null when it came with a key. */
    consoleSession: { id: string } | null;
  }
}

export const SESSION_COOKIE = 'tollroute_session';

export interface ConsoleSettings {
  /** The gateway's public address: its origin is the console's, and https there means TLS. */
  publicUrl: string;
  sessionTtlMs: number;
}

/**
 * HttpOnly (page scripts never read it), SameSite=Strict (no other site's page makes the browser
 * send it), the whole gateway as its path, and an explicit lifetime. Secure when the request came
 * over TLS as the gateway sees it, or when the gateway's public address is https: the gateway
 * trusts no proxy's X-Forwarded-Proto, so a proxy that ends TLS in front of it is known from
 * public_url alone.
 */
export function sessionCookieOptions(request: FastifyRequest, settings: ConsoleSettings, maxAgeMs = settings.sessionTtlMs): CookieSerializeOptions {
  const secure = request.protocol === 'https' || settings.publicUrl.startsWith('https:');
  return { httpOnly: true, sameSite: 'strict', path: '/', maxAge: Math.floor(maxAgeMs / 1000), secure };
}

export function clearSessionCookie(request: FastifyRequest, reply: FastifyReply, settings: ConsoleSettings): void {
  reply.clearCookie(SESSION_COOKIE, sessionCookieOptions(request, settings, 0));
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Refuses (403) a state-changing request from another site's page: one that says so
 * (`Sec-Fetch-Site: cross-site`), or whose Origin is neither the public address's nor the one the
 * request itself was sent to. No Origin at all is a client that is not a browser page: it has no
 * ambient cookie to be tricked with.
 */
export function refuseCrossSite(request: FastifyRequest, publicOrigin: string): void {
  if (SAFE_METHODS.has(request.method)) return;
  if (request.headers['sec-fetch-site'] === 'cross-site') {
    throw forbidden('refused: this request came from another site (Sec-Fetch-Site: cross-site); use the console on this gateway');
  }
  const origin = request.headers.origin;
  if (origin === undefined || origin === publicOrigin || origin === `${request.protocol}://${request.host}`) return;
  throw forbidden(`refused: Origin ${origin} is not this gateway's (${publicOrigin}); use the console on this gateway`);
}

export function accountAuthHook({ keys, store, settings }: { keys: KeyResolver; store: Store; settings: ConsoleSettings }) {
  const byKey = apiKeyHook(keys);
  const publicOrigin = new URL(settings.publicUrl).origin;
  return async function authenticateAccount(request: FastifyRequest, reply: FastifyReply) {
    // A key, when sent, decides alone, and is subject to no origin check: nothing sends it unasked.
    if (sendsKeyHeader(request)) return new Promise<void>((resolve, reject) => byKey(request, reply, (error) => (error ? reject(error) : resolve())));
    const secret = request.cookies[SESSION_COOKIE];
    if (!secret) throw auth();
    refuseCrossSite(request, publicOrigin);
    // Looked up first, whatever the address's record: a live session is never refused for it.
    const check = () => checkSession(store.db, { secret, now: Date.now() });
    const session = await (keys.failures ? keys.failures.paceLookup(request.ip, check) : check());
    if ('refused' in session) {
      clearSessionCookie(request, reply, settings); // the browser stops sending a dead cookie
      // Only a secret that names no session may be a guess; a stale cookie is its owner's.
      throw session.unknown ? failedAuthentication(keys.failures, request.ip, auth(session.refused)) : auth(session.refused);
    }
    request.caller = session.caller;
    request.consoleSession = { id: session.id };
  };
}
