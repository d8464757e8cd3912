// A JSON body that stalls is cut at `limits.body_timeout_ms` with a 408: a caller holds a connection
// and a parser only that long for a body of at most body_limit_bytes. The whole request's
// receive_timeout_ms (Node's requestTimeout) stays for uploads (multipart), the only bodies that
// may rightly take long.
//
// One interval for the whole server checks the bodies still arriving: no timer per request. A body
// is forgotten once read (preValidation), or at the next check once its request is answered or gone.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { requestTimeout } from '../errors.js';

const READS_BODY = new Set(['POST', 'PUT', 'PATCH']);

/** Whether the request announces a body the gateway parses itself (multipart is read by its route, under the longer timeout). */
function awaitsBody(request: FastifyRequest): boolean {
  if (!READS_BODY.has(request.method)) return false;
  const { headers } = request;
  const length = headers['content-length'];
  if ((length === undefined || length === '0') && headers['transfer-encoding'] === undefined) return false;
  return !/^multipart\//i.test(headers['content-type'] ?? '');
}

/** Notes a request whose body is to be read (called from the server's one onRequest hook). */
export type NoteBodyArrival = (request: FastifyRequest, reply: FastifyReply) => void;

export function registerBodyTimeout(app: FastifyInstance, { timeoutMs }: { timeoutMs: number }): NoteBodyArrival {
  /** Responses whose request's body is still arriving, with when the request arrived (performance.now()). */
  const arriving = new Map<ServerResponse, number>();

  function cutStalled() {
    const now = performance.now();
    for (const [res, arrivedAt] of arriving) {
      const req: IncomingMessage = res.req;
      if (req.complete || req.destroyed || res.headersSent) {
        arriving.delete(res);
        continue;
      }
      // Only while the parser reads it (it listens for errors): the error goes its way, and Fastify
      // answers it (408, in our error shape) and closes the connection, whose rest is never read.
      if (now - arrivedAt < timeoutMs || req.listenerCount('error') === 0) continue;
      arriving.delete(res);
      req.emit('error', requestTimeout(`the request body was not received within ${Math.ceil(timeoutMs / 1000)} s`));
    }
  }

  const checkEveryMs = Math.min(1_000, Math.max(25, Math.floor(timeoutMs / 4)));
  const timer = setInterval(cutStalled, checkEveryMs).unref();
  app.addHook('onClose', (_app, done) => {
    clearInterval(timer);
    done();
  });
  // A callback hook: no promise per request for work that never waits.
  app.addHook('preValidation', (_request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    arriving.delete(reply.raw);
    done();
  });
  return (request, reply) => {
    if (awaitsBody(request)) arriving.set(reply.raw, performance.now());
  };
}
