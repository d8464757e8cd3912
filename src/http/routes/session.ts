// The account console's sign-in and sign-out (/v1/account/session). Signing in takes a one-time
// link's token or an API key and answers the session cookie; signing out ends the session on the
// gateway, so a copy of the cookie is refused from then on.
import type { FastifyPluginAsync } from 'fastify';
import { accountView, iso } from '../../admin/views.js';
import { hashSecret } from '../../console/secrets.js';
import { type SignIn, signInWithApiKey, signInWithLoginToken } from '../../console/sign-in.js';
import { auth, invalidRequest, notFound } from '../../errors.js';
import { findAccount } from '../../store/accounts.js';
import type { Store } from '../../store/open.js';
import { endSession } from '../../store/sessions.js';
import { failedAuthentication } from '../auth.js';
import type { KeyResolver } from '../key-resolver.js';
import { SignInSchema, SignOutSchema } from '../schemas/session.js';
import { type ConsoleSettings, clearSessionCookie, refuseCrossSite, SESSION_COOKIE, sessionCookieOptions } from '../session-auth.js';

export interface SessionRouteDeps {
  store: Store;
  keys: KeyResolver;
  settings: ConsoleSettings;
}

/** POST /v1/account/session: no caller yet, so it makes its own checks. */
export const signInRoutes: FastifyPluginAsync<SessionRouteDeps> = async (app, { store, keys, settings }) => {
  const publicOrigin = new URL(settings.publicUrl).origin;

  app.post('/v1/account/session', { schema: SignInSchema }, async (request, reply) => {
    // Another site's page must not sign a visitor in either (into an account of the attacker's).
    refuseCrossSite(request, publicOrigin);
    const { login_token: token, api_key: key } = request.body as { login_token?: string; api_key?: string };
    if ((token === undefined) === (key === undefined)) throw invalidRequest('send either login_token or api_key');
    const now = Date.now();
    const ttlMs = settings.sessionTtlMs;
    // As for API keys: the credential is looked up first (paced for an address that keeps failing),
    // so a valid one signs in from any address, and only a refused one counts against it.
    const signIn = (): Promise<SignIn> =>
      token !== undefined ? signInWithLoginToken(store, { token, ttlMs, now }) : signInWithApiKey(store, { key: key!, ttlMs, now });
    const signedIn = await (keys.failures ? keys.failures.paceLookup(request.ip, signIn) : signIn());
    if ('refused' in signedIn) throw failedAuthentication(keys.failures, request.ip, auth(signedIn.refused));
    const { session } = signedIn;
    const account = await findAccount(store.db, session.accountId);
    if (!account) throw notFound(`account ${session.accountId} not found`);
    // A session this browser held before is ended, not left live beside the new one.
    const previous = request.cookies[SESSION_COOKIE];
    if (previous) await endSession(store.db, { id: hashSecret(previous), now });
    reply.setCookie(SESSION_COOKIE, session.secret, sessionCookieOptions(request, settings));
    reply.header('cache-control', 'no-store');
    return { account: accountView(account), expires_at: iso(session.expiresAt) };
  });
};

/** DELETE /v1/account/session: behind the account API's authentication, which found the session. */
export const signOutRoutes: FastifyPluginAsync<SessionRouteDeps> = async (app, { store, settings }) => {
  app.delete('/v1/account/session', { schema: SignOutSchema }, async (request, reply) => {
    if (!request.consoleSession) throw invalidRequest('no console session to sign out: this request came with an API key, not the session cookie');
    await endSession(store.db, { id: request.consoleSession.id, now: Date.now() });
    clearSessionCookie(request, reply, settings);
    reply.code(204);
  });
};
