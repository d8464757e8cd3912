// Authentication hooks: API keys for /v1, the admin token for /admin.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { BATCH_LINE_HEADER } from '../batches/line-auth.js';
import { isExpired } from '../billing/key-limits.js';
import { auth, forbidden, rateLimited } from '../errors.js';
import type { AuthFailureLimit } from '../limits/auth-failures.js';
import type { Caller } from '../pipeline/types.js';
import type { KeyResolver } from './key-resolver.js';

declare module 'fastify' {
  interface FastifyRequest {
    caller: Caller | null;
    /** The caller's own x-request-id, when it sent a well-formed one. */
    clientRequestId: string | null;
    /** A line of a batch, sent by the batch runner (batches/line-auth.ts): billed at the batch price. */
    batchLine: boolean;
  }
}

const KEY_PREFIX = 'tr-';
export const ACCOUNT_SUSPENDED = "this API key's account is suspended by the operator; its keys are refused until it is resumed";

/** Whether the request carries a key header at all: then the key alone decides, never a cookie. */
export const sendsKeyHeader = (request: FastifyRequest): boolean =>
  request.headers.authorization !== undefined || request.headers['x-api-key'] !== undefined || request.headers['x-goog-api-key'] !== undefined;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route takes the key in `?key=` as well (the Gemini API's way); the logs never carry a query. */
    keyInQuery?: boolean;
  }
}

const firstOf = (header: string | string[] | undefined) => (Array.isArray(header) ? header[0] : header);

/**
 * The key from `Authorization: Bearer …`, `x-api-key` or `x-goog-api-key` (any endpoint, DESIGN
 * section 5), or `?key=` on the Gemini API's routes. When several are sent, the one that is a tr-
 * key counts: a client may carry another Authorization.
 */
export function presentedKey(request: FastifyRequest): string | undefined {
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '')?.[1];
  const apiKey = firstOf(request.headers['x-api-key']) ?? firstOf(request.headers['x-goog-api-key']);
  if (bearer?.startsWith(KEY_PREFIX)) return bearer;
  if (apiKey?.startsWith(KEY_PREFIX)) return apiKey;
  const inQuery = request.routeOptions.config?.keyInQuery ? (request.query as { key?: unknown } | undefined)?.key : undefined;
  if (typeof inQuery === 'string' && inQuery.startsWith(KEY_PREFIX)) return inQuery;
  return bearer ?? apiKey;
}

/**
 * The answer to a failed authentication (an unknown key, sign-in link or session cookie) from
 * `address`, which is counted: `refusal` (401) while the address is within its limit, else 429.
 * Asked only after the credential was looked up, so a valid one is never refused for its address.
 */
export function failedAuthentication(failures: AuthFailureLimit | undefined, address: string, refusal: Error): Error {
  const refusedForMs = failures?.refusedForMs(address) ?? 0;
  failures?.recordFailure(address);
  if (refusedForMs > 0) return rateLimited({ retryAfterMs: refusedForMs, message: 'too many failed authentications from this address' });
  return refusal;
}

export function apiKeyHook(keys: KeyResolver) {
  const failures = keys.failures;
  /** The request's caller set, or why it may not call: the key's verdict, read at once or from the store. */
  function admit(request: FastifyRequest, caller: Caller | undefined): Error | undefined {
    if (!caller) return failedAuthentication(failures, request.ip, auth());
    if (caller.suspended) return forbidden(ACCOUNT_SUSPENDED);
    // Checked here, not by the resolver's cache: a cached key stops at its expiry to the millisecond.
    if (isExpired(caller.limits, Date.now())) return auth(`this API key expired at ${new Date(caller.limits!.expiresAt!).toISOString()}`);
    request.caller = caller;
    return undefined;
  }
  // A callback hook: a key known in memory (nearly every request) is decided without a promise or a
  // turn of the microtask queue; only a key the store must be asked about waits.
  return function authenticate(request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction) {
    let verdict: Caller | undefined | Promise<Caller | undefined>;
    // A batch's line, sent by the runner: its internal credential decides (a wrong one is an invalid key).
    const batchLine = request.headers[BATCH_LINE_HEADER];
    if (batchLine !== undefined) {
      const resolving = typeof batchLine === 'string' && keys.batchLine ? keys.batchLine(batchLine) : Promise.resolve(undefined);
      resolving.then((caller) => {
        if (caller) request.batchLine = true;
        done(admit(request, caller));
      }, done);
      return;
    }
    try {
      const key = presentedKey(request);
      // No key, or not one of ours, never reaches the store: a plain 401, not counted against the address.
      if (!key?.startsWith(KEY_PREFIX)) throw auth();
      verdict = keys.resolve(key, request.ip);
    } catch (error) {
      return done(error as Error);
    }
    if (verdict instanceof Promise) verdict.then((caller) => done(admit(request, caller)), done);
    else done(admit(request, verdict));
  };
}

const digest = (text: string) => createHash('sha256').update(text).digest();

/** Whether an Authorization header carries `Bearer <token>`, compared in constant time. */
export function bearerMatcher(token: string): (authorization: string | undefined) => boolean {
  const expected = digest(token);
  return (authorization) => {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
    // Compare digests: equal length always, so timingSafeEqual never leaks the token's length.
    return Boolean(match?.[1]) && timingSafeEqual(digest(match![1]!), expected);
  };
}

export function adminTokenHook(adminToken: string) {
  const matches = bearerMatcher(adminToken);
  return async function authenticateAdmin(request: FastifyRequest) {
    if (!matches(request.headers.authorization)) throw auth('invalid or missing admin token');
  };
}

export function requireCaller(request: FastifyRequest): Caller {
  if (!request.caller) throw auth();
  return request.caller;
}
