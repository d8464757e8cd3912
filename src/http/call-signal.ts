// The signal a metered call runs under: aborted at the call's deadline, and, for a stream, when the
// caller leaves before its answer is complete. The signal goes down into the upstream request,
// which stops with it. One controller and one timer per call, the timer cleared as soon as the
// call is over: AbortSignal.timeout and AbortSignal.any would leave a timer, weak references and a
// finalizer behind every call until the deadline passed or a full garbage collection ran.
import type { ServerResponse } from 'node:http';

export interface CallSignal {
  signal: AbortSignal;
  /** The call is over: its deadline no longer matters. */
  done(): void;
}

/** The reason a deadline aborts with: a `TimeoutError`, as AbortSignal.timeout's, so it reads as one. */
const deadlinePassed = () => new DOMException('The operation was aborted due to timeout', 'TimeoutError');

export function callSignal(raw: ServerResponse, { timeoutMs, stopsWhenCallerLeaves }: { timeoutMs: number; stopsWhenCallerLeaves: boolean }): CallSignal {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(deadlinePassed()), timeoutMs);
  timer.unref();
  const done = () => clearTimeout(timer);
  if (stopsWhenCallerLeaves) {
    raw.once('close', () => {
      done();
      if (!raw.writableFinished) controller.abort(new Error('client closed the connection'));
    });
  }
  return { signal: controller.signal, done };
}
