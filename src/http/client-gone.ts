// One AbortController per call, aborted if the client leaves before its answer is complete: the
// signal goes down into the upstream request, which stops with it.
import type { FastifyReply } from 'fastify';

export function abortOnClientGone(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort(new Error('client closed the connection'));
  });
  return controller.signal;
}
