// Idempotency-Key on POSTs that answer in one piece: the first answer is kept for 24 hours and
// replayed; the call (and its charge) never runs twice.
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { conflict, invalidRequest, unprocessable } from '../errors.js';
import { JsonText, jsonBodyText } from '../json-text.js';
import { abandonIdempotent, beginIdempotent, completeIdempotent, keepAnswerLate } from '../store/idempotency.js';
import type { Store } from '../store/open.js';
import { requireCaller } from './auth.js';
import { canonicalJson } from './canonical-json.js';

export interface JsonResult {
  statusCode: number;
  /** The answer's value, or its text already written (JsonText). */
  body: unknown;
}

/** Sends a JSON answer: text already written goes out as it is, any other value through the route's serializer. */
export function sendJson(reply: FastifyReply, result: JsonResult): FastifyReply {
  reply.code(result.statusCode);
  return result.body instanceof JsonText ? reply.type('application/json; charset=utf-8').send(result.body.text) : reply.send(result.body);
}

const MAX_KEY_LENGTH = 255;

function keyOf(request: FastifyRequest): string | undefined {
  const header = request.headers['idempotency-key'];
  const key = Array.isArray(header) ? header[0] : header;
  if (key === undefined) return undefined;
  if (key.length === 0 || key.length > MAX_KEY_LENGTH) throw invalidRequest(`Idempotency-Key: expected 1 to ${MAX_KEY_LENGTH} characters`);
  return key;
}

export interface IdempotencyDeps {
  store: Store;
  instanceId: string;
  /**
   * Admits a replay as a fresh call of the same request would be (the replaying key's models and
   * rate limit: pipeline/replay-admission.ts); absent where the route admitted the request already.
   */
  admitReplay?: () => Promise<void>;
}

/** Runs `call` once per (account, Idempotency-Key); without the header it simply runs it. */
export function runIdempotent(
  deps: IdempotencyDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  call: () => Promise<JsonResult>,
  /** What identifies the request's content (the JSON body unless the route says otherwise, e.g. a file's digest). */
  fingerprint: unknown = request.body,
): Promise<unknown> {
  const key = keyOf(request);
  // Without the header (most calls) the call simply runs, with no async frame of this one's around it.
  if (key === undefined) return call().then((result) => sendJson(reply, result));
  return runOnce(deps, request, reply, call, key, fingerprint);
}

async function runOnce(
  { store, instanceId, admitReplay }: IdempotencyDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  call: () => Promise<JsonResult>,
  key: string,
  fingerprint: unknown,
): Promise<unknown> {
  const accountId = requireCaller(request).accountId;
  // The route is part of the fingerprint: one key reused on another endpoint is a different request.
  // Canonical JSON: the same body with its fields in another order is the same request.
  const bodyHash = createHash('sha256')
    .update(`${request.method} ${request.routeOptions.url}\n${canonicalJson(fingerprint)}`)
    .digest('hex');
  const startedAt = Date.now();
  const begun = await beginIdempotent(store.db, { accountId, key, bodyHash, now: startedAt, instanceId, requestId: request.id });
  if (begun.kind === 'mismatch') throw unprocessable('Idempotency-Key was already used with a different request');
  if (begun.kind === 'running') throw conflict('a request with this Idempotency-Key is still running');
  if (begun.kind === 'replay') {
    await admitReplay?.();
    return reply.code(begun.statusCode).header('idempotent-replayed', 'true').type('application/json').send(begun.body);
  }
  let result: JsonResult;
  try {
    result = await call();
  } catch (error) {
    // A refused or failed call charged nothing: free the key so a retry can run. (A caller that
    // left does not end up here: the call runs on to its answer, which is kept for the retry.)
    await abandonIdempotent(store.db, { accountId, key }).catch(() => {});
    throw error;
  }
  const text = jsonBodyText(result.body);
  try {
    await completeIdempotent(store.db, { accountId, key, statusCode: result.statusCode, body: text });
  } catch (error) {
    // The call is answered and its charge kept (written, or journaled until the store takes it):
    // the caller gets what it paid for, never a 503 that invites a second, charged run. The answer
    // is kept for replays once the store takes writes again.
    request.log.warn({ err: error }, 'the answer to an Idempotency-Key call could not be kept yet; it is retried in the background');
    const record = { accountId, key, bodyHash, requestId: request.id, instanceId, startedAt, statusCode: result.statusCode, body: text };
    keepUntilWritten(() => keepAnswerLate(store.db, record), request.log);
  }
  return reply.code(result.statusCode).type('application/json').send(text);
}

/** The waits between tries of a late write: quick at first, then every half minute, for the record's 24 hours. */
export const LATE_KEEP_DELAYS_MS = [1_000, 2_000, 5_000, 10_000, 30_000];
const LATE_KEEP_TRIES = 2_900;

/** Tries `write` until it lands (a process that stops meanwhile leaves the record to the sweep). */
export function keepUntilWritten(write: () => Promise<void>, log: FastifyRequest['log'], tried = 0): void {
  const delayMs = LATE_KEEP_DELAYS_MS[Math.min(tried, LATE_KEEP_DELAYS_MS.length - 1)];
  const timer = setTimeout(() => {
    write().then(
      () => log.info('the answer to an Idempotency-Key call was kept late, for its replays'),
      (error) => {
        if (tried + 1 < LATE_KEEP_TRIES) keepUntilWritten(write, log, tried + 1);
        else log.error({ err: error }, 'the answer to an Idempotency-Key call could not be kept; a retry may run again');
      },
    );
  }, delayMs);
  timer.unref();
}
