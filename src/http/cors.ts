// CORS for browser applications that call the API (/v1/…) directly: off unless the operator lists
// the origins allowed (`cors.origins`). A preflight is answered here, before any route or key is
// looked at (a browser sends it without credentials); every other request from an allowed origin
// gets the headers that let its page read the answer, streams included.
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { OUTPUT_CAP_LOWERED_HEADER } from './metered-handler.js';

/** What the official SDKs send (the OpenAI and Anthropic SDKs add their x-stainless-* headers too). */
const ALLOWED_HEADERS = [
  'authorization',
  'x-api-key',
  'content-type',
  'anthropic-version',
  'anthropic-beta',
  'anthropic-dangerous-direct-browser-access',
  'vendor-version',
  'idempotency-key',
  'x-request-id',
  'x-api-resource-id',
];
const ALLOWED = new Set(ALLOWED_HEADERS);
const isAllowedHeader = (name: string) => ALLOWED.has(name) || name.startsWith('x-stainless-');

/** The headers a page may read beside the simple ones (the SDKs read retry-after and x-request-id). */
const EXPOSED = ['retry-after', 'x-request-id', 'x-client-request-id', 'server-timing', 'idempotent-replayed', OUTPUT_CAP_LOWERED_HEADER].join(', ');
const METHODS = 'GET, POST, DELETE';
/** How long a browser may keep a preflight's answer, in seconds. */
const MAX_AGE = '600';

/** The headers a preflight asked for that may be sent: an SDK's own list, less anything else. */
function allowedOf(requested: string | undefined): string {
  if (!requested) return ALLOWED_HEADERS.join(', ');
  const names = requested
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter(isAllowedHeader);
  return names.join(', ');
}

export function registerCors(app: FastifyInstance, { origins }: { origins: readonly string[] }): void {
  if (origins.length === 0) return; // off: not even a hook per request
  const anyOrigin = origins.includes('*');
  const allowed = new Set(origins);
  // Root-level, so that a preflight, which no route answers, meets it before the 404.
  app.addHook('onRequest', function answerCors(request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) {
    const origin = request.headers.origin;
    if (origin === undefined || !request.url.startsWith('/v1/') || !(anyOrigin || allowed.has(origin))) return done();
    // On the raw response: a stream's own writeHead keeps them.
    const raw = reply.raw;
    raw.setHeader('access-control-allow-origin', anyOrigin ? '*' : origin);
    raw.setHeader('vary', 'Origin');
    if (request.method !== 'OPTIONS' || request.headers['access-control-request-method'] === undefined) {
      raw.setHeader('access-control-expose-headers', EXPOSED);
      return done();
    }
    raw.setHeader('access-control-allow-methods', METHODS);
    raw.setHeader('access-control-allow-headers', allowedOf(request.headers['access-control-request-headers']));
    raw.setHeader('access-control-max-age', MAX_AGE);
    reply.code(204).send(); // answered: the preflight goes no further (done is not called)
  });
}
