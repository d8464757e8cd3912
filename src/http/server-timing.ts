// W3C Server-Timing on every answer: `gateway;dur=0.21, upstream;dur=3.80` (milliseconds), so a
// caller sees the gateway's own cost beside the upstream's in curl and in a browser's tools. The
// gateway's time runs from the request's arrival to the answer's headers, less the upstream's time
// (its whole answer for a call answered in one piece, its first byte for a stream).
import type { FastifyInstance, FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyRequest {
    /** performance.now() when the request arrived. */
    arrivedAt: number;
    /** The upstream's share of the time to the answer's headers, when an upstream was called. */
    upstreamMs: number | undefined;
    /** The Server-Timing value as of now, for an answer that writes its own headers (a stream). */
    serverTiming(): string;
  }
}

export interface ServerTimingObserver {
  /** The gateway's own time for one answer, in seconds. */
  observeGatewayTime(seconds: number): void;
}

/** The header's value for this request as of now; records the gateway's time. */
function serverTiming(request: FastifyRequest, observer: ServerTimingObserver): string {
  const upstreamMs = request.upstreamMs;
  const gatewayMs = Math.max(0, performance.now() - request.arrivedAt - (upstreamMs ?? 0));
  observer.observeGatewayTime(gatewayMs / 1000);
  const gateway = `gateway;dur=${gatewayMs.toFixed(2)}`;
  return upstreamMs === undefined ? gateway : `${gateway}, upstream;dur=${upstreamMs.toFixed(2)}`;
}

export function registerServerTiming(app: FastifyInstance, observer: ServerTimingObserver) {
  app.decorateRequest('arrivedAt', 0);
  app.decorateRequest('upstreamMs', undefined);
  app.decorateRequest('serverTiming', function (this: FastifyRequest) {
    return serverTiming(this, observer);
  });
  // Callback hooks, not async ones: no promise per request for work that never waits.
  app.addHook('onRequest', (request, _reply, done) => {
    request.arrivedAt = performance.now();
    done();
  });
  // A hijacked stream writes its own headers with request.serverTiming(); every other answer passes here.
  app.addHook('onSend', (request, reply, payload, done) => {
    reply.header('server-timing', serverTiming(request, observer));
    done(null, payload);
  });
}
