// Fastify's side of a metered call: plain values and an AbortSignal into the pipeline, the
// answer back out — JSON in one piece, or a stream piped with backpressure.
import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import type { FastifyBaseLogger, FastifyRequest, RouteHandlerMethod } from 'fastify';
import type { Pipeline } from '../pipeline/metered-call.js';
import type { MeteredEndpoint } from '../pipeline/types.js';
import type { Store } from '../store/open.js';
import { requireCaller } from './auth.js';
import { abortOnClientGone } from './client-gone.js';
import { runIdempotent } from './idempotency.js';

export interface MeteredRoute<Body> extends MeteredEndpoint<Body> {
  /** Where the model id comes from (default: the body's `model`, however the body was read). */
  modelOf?(request: FastifyRequest): string | undefined;
  /** Whether this request answers with a stream (streams are never replayed by Idempotency-Key). */
  streams?(body: Body): boolean;
  /** For bodies Fastify does not parse into `request.body` (multipart): read and validate them here. */
  readBody?(request: FastifyRequest): Promise<Body>;
  /** What Idempotency-Key compares between two requests (default: the body). */
  fingerprint?(body: Body): unknown;
  /** The protocol's own error event, written when the upstream fails after the headers went out. */
  streamFailure?: string;
}

/**
 * Pipes a streamed answer out with backpressure. A client that leaves destroys the source, which
 * stops the upstream call. A source that fails after the headers ends with the protocol's error
 * event when it has one; otherwise the connection is destroyed rather than ended as if whole.
 */
function sendStream(source: Readable, raw: ServerResponse, log: FastifyBaseLogger, failureEvent: string | undefined) {
  raw.once('close', () => {
    if (!raw.writableFinished) source.destroy();
  });
  source.pipe(raw, { end: false });
  source.once('end', () => raw.end());
  source.once('error', (error) => {
    source.unpipe(raw);
    log.info({ err: error }, 'stream ended early');
    if (failureEvent && !raw.destroyed) raw.end(failureEvent);
    else raw.destroy();
  });
}

export function meteredHandler<Body>(deps: { pipeline: Pipeline; store: Store }, route: MeteredRoute<Body>): RouteHandlerMethod {
  return async function handleMeteredCall(request, reply) {
    const body = route.readBody ? await route.readBody(request) : (request.body as Body);
    // Stopped when the client leaves, or when the call overruns its deadline.
    const signal = AbortSignal.any([abortOnClientGone(reply), AbortSignal.timeout(deps.pipeline.callTimeoutMs)]);
    const modelId = route.modelOf ? route.modelOf(request) : (body as { model?: string } | undefined)?.model;
    const call = () => deps.pipeline.run(route, { caller: requireCaller(request), modelId, body, requestId: request.id, signal }, request.log);

    if (!route.streams?.(body)) {
      return runIdempotent(deps.store, request, reply, async () => {
        const answer = await call();
        if (answer.kind !== 'json') throw new Error(`${route.endpoint}: expected a JSON answer`);
        return { statusCode: answer.statusCode ?? 200, body: answer.body };
      }, route.fingerprint ? route.fingerprint(body) : body);
    }

    const answer = await call();
    if (answer.kind === 'json') return reply.code(answer.statusCode ?? 200).send(answer.body);
    reply.hijack();
    reply.raw.writeHead(answer.statusCode ?? 200, {
      'content-type': answer.contentType,
      'cache-control': 'no-cache',
      'x-request-id': request.id,
    });
    sendStream(answer.body, reply.raw, request.log, route.streamFailure);
  };
}
