// Fastify's side of a metered call: plain values and an AbortSignal into the pipeline, the
// answer back out — JSON in one piece, or a stream piped with backpressure.
import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import type { FastifyBaseLogger, FastifyRequest, RouteHandlerMethod } from 'fastify';
import { invalidRequest } from '../errors.js';
import type { Pipeline } from '../pipeline/metered-call.js';
import { admitReplay } from '../pipeline/replay-admission.js';
import type { MeteredAnswer, MeteredEndpoint, StreamAnswer } from '../pipeline/types.js';
import type { Store } from '../store/open.js';
import { requireCaller } from './auth.js';
import { callSignal } from './call-signal.js';
import { type JsonResult, runIdempotent, sendJson } from './idempotency.js';
import { addToLogLine } from './metrics.js';

/**
 * Says that the call went upstream with this output cap (max_tokens, max_output_tokens) in place of
 * the model's maximum, which the account's balance could not hold (pipeline/output-cap.ts).
 */
export const OUTPUT_CAP_LOWERED_HEADER = 'x-tollroute-max-tokens-lowered';

export interface MeteredRoute<Body> extends MeteredEndpoint<Body> {
  /** Where the model id comes from (default: the body's `model`, however the body was read). */
  modelOf?(request: FastifyRequest): string | undefined;
  /** For bodies Fastify does not parse into `request.body` (multipart): read and validate them here. */
  readBody?(request: FastifyRequest): Promise<Body>;
  /** What Idempotency-Key compares between two requests (default: the body). */
  fingerprint?(body: Body): unknown;
  /**
   * The protocol's own error event, written when the upstream fails after the headers went out; a
   * function when the request picks among its protocol's stream forms (Gemini's SSE or JSON array).
   */
  streamFailure?: string | ((request: FastifyRequest) => string);
}

/**
 * Pipes a streamed answer out with backpressure. A client that leaves destroys the source, which
 * stops the upstream call. A source that fails after the headers, or ends without its protocol's
 * end marker, ends with the protocol's error event when it has one (unless the upstream's own
 * error already went out); otherwise the connection is cut rather than ended as if whole.
 */
function sendStream(answer: StreamAnswer, raw: ServerResponse, log: FastifyBaseLogger, failureEvent: string | undefined) {
  const source: Readable = answer.body;
  // Only a protocol with an error event passes the upstream's own error on: an audio stream's error
  // line is decoded away, so its caller would see a clean end of cut audio.
  const upstreamErrorWentOut = () => answer.meter.failed && failureEvent !== undefined;
  const endBroken = () => {
    if (failureEvent && !raw.destroyed) raw.end(failureEvent);
    // Cut after what was written has gone out (destroySoon, not destroy): the client reads the
    // bytes it was sent and then a broken body, never a closed connection with no answer at all.
    else if (raw.socket && !raw.destroyed) raw.socket.destroySoon();
    else raw.destroy();
  };
  raw.once('close', () => {
    if (!raw.writableFinished) source.destroy();
  });
  source.pipe(raw, { end: false });
  holdLastDataForEnd(source, raw, answer.meter);
  source.once('end', () => {
    if (answer.meter.completed || upstreamErrorWentOut()) raw.end();
    else {
      log.info('the upstream stream ended before its end marker');
      endBroken();
    }
  });
  source.once('error', (error) => {
    source.unpipe(raw);
    // A failed stream keeps what it had buffered but no longer flows: that part was made, and goes
    // out before the error (a burst of audio then a failure could otherwise leave the caller nothing).
    for (let chunk = source.read(); chunk !== null && !raw.destroyed; chunk = source.read()) raw.write(chunk);
    log.info({ err: error }, 'stream ended early');
    if (upstreamErrorWentOut() && !raw.destroyed) raw.end();
    else endBroken();
  });
}

/**
 * A completed stream's last data leaves with the response's end, in one write: the socket is corked
 * from the first data after the end marker was read (the events the tap lets out while the settle is
 * written, then the end marker once it landed) until `end`, which uncorks it fully, and for one turn
 * at most should the end not follow; data after such a turn corks it again for one more. Each write
 * to a socket is a system call that wakes the reader; a speech stream that came in one burst made
 * four writes to its caller, now two. A stream's first data is never held.
 *
 * The socket is corked, not the response: from Node 22 a corked response keeps chunked writes in a
 * buffer of its own, and its `end` writes the body's terminator before flushing that buffer, so the
 * held data would land after the end of the body and the caller would see a stream cut short.
 */
export function holdLastDataForEnd(source: Readable, raw: ServerResponse, meter: StreamAnswer['meter']) {
  let dataSeen = false;
  let corked = false;
  const corkIfLast = () => {
    if (dataSeen && meter.completed && !corked) {
      const socket = raw.socket;
      if (socket === null) return;
      corked = true;
      socket.cork();
      setImmediate(() => {
        corked = false;
        if (!raw.writableEnded) socket.uncork();
      });
    }
    dataSeen = true;
  };
  // Before pipe's own listener, so the cork is in place when that listener writes the data.
  source.prependListener('data', corkIfLast);
}

export function meteredHandler<Body>(deps: { pipeline: Pipeline; store: Store }, route: MeteredRoute<Body>): RouteHandlerMethod {
  return async function handleMeteredCall(request, reply) {
    const body = route.readBody ? await route.readBody(request) : (request.body as Body);
    const streams = route.streams?.(body) === true;
    // Replaying a stream would mean keeping it whole; refused plainly rather than charged twice.
    if (streams && request.headers['idempotency-key'] !== undefined) {
      throw invalidRequest('Idempotency-Key: not supported on streamed calls; send it on a call that answers in one piece, or retry the stream without it');
    }
    // A stream stops when the client leaves; a call answered in one piece runs to its end and is
    // settled on real usage (DESIGN §5). Both stop at the call's deadline.
    const modelId = route.modelOf ? route.modelOf(request) : (body as { model?: string } | undefined)?.model;
    /** The call started under its signal (the deadline; for a stream, the caller leaving too). */
    const start = () => {
      const callSignals = callSignal(reply.raw, { timeoutMs: deps.pipeline.callTimeoutMs, stopsWhenCallerLeaves: streams });
      const metered = {
        caller: requireCaller(request),
        modelId,
        body,
        requestId: request.id,
        clientRequestId: request.clientRequestId,
        signal: callSignals.signal,
        addToLogLine: addToLogLine(request),
        // A line of a batch (batches/line-auth.ts): billed at the model's batch price.
        ...(request.batchLine && { batchLine: true }),
      };
      return { callSignals, running: deps.pipeline.run(route, metered, request.log) };
    };
    if (!streams) {
      /** A call in one piece: over when it returns (a stream, when its response closes: callSignal). */
      const callInOnePiece = async (): Promise<JsonResult> => {
        const { callSignals, running } = start();
        let answer: MeteredAnswer;
        try {
          answer = await running;
        } catch (error) {
          callSignals.done();
          throw error;
        }
        callSignals.answered();
        if (answer.kind !== 'json') throw new Error(`${route.endpoint}: expected a JSON answer`);
        request.upstreamMs = answer.upstreamMs;
        if (answer.loweredOutputCap !== undefined) reply.header(OUTPUT_CAP_LOWERED_HEADER, String(answer.loweredOutputCap));
        return { statusCode: answer.statusCode ?? 200, body: answer.body };
      };
      const fingerprint = route.fingerprint ? route.fingerprint(body) : body;
      const admitReplayed = () =>
        admitReplay(deps.pipeline, { caller: requireCaller(request), modelId, modelType: route.modelType, rateLimited: !route.admitsBeforeBody }, request.log);
      const idempotency = { store: deps.store, instanceId: deps.pipeline.instanceId, admitReplay: admitReplayed };
      return runIdempotent(idempotency, request, reply, callInOnePiece, fingerprint);
    }

    const answer = await start().running;
    request.upstreamMs = answer.upstreamMs;
    if (answer.loweredOutputCap !== undefined) reply.raw.setHeader(OUTPUT_CAP_LOWERED_HEADER, String(answer.loweredOutputCap));
    if (answer.kind === 'json') return sendJson(reply, { statusCode: answer.statusCode ?? 200, body: answer.body });
    reply.hijack();
    reply.raw.writeHead(answer.statusCode ?? 200, {
      'content-type': answer.contentType,
      'cache-control': 'no-cache',
      'x-request-id': request.id,
      'server-timing': request.serverTiming(),
    });
    sendStream(answer, reply.raw, request.log, typeof route.streamFailure === 'function' ? route.streamFailure(request) : route.streamFailure);
  };
}
