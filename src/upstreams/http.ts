// The one way an adapter talks HTTP to an upstream: undici's dispatch on the channel's pool, with a
// handler of the gateway's for an answer read as it comes (streamed-answer.ts) or read whole.

import type { Dispatcher } from 'undici';
import { abortReason } from '../abort-slot.js';
import type { Upstream } from './pool.js';
import { StreamedAnswer, type UpstreamResponse } from './streamed-answer.js';
import { type AnswerTimeouts, TimedAnswer } from './timed-answer.js';

export type { AnswerBody, UpstreamResponse } from './streamed-answer.js';
export { headerValue, retryAfterMsOf, UpstreamHttpError } from './upstream-error.js';

/**
 * POSTs JSON; resolves once a 2xx answer's headers arrive, its body to be read as it comes (a
 * stream's events, or a whole answer with `body.text()`). A non-2xx answer throws
 * UpstreamHttpError, its body limited. undici's dispatch with a handler of the gateway's
 * (streamed-answer.ts), timed by the answer watch, as postForText is.
 */
export function postJson(upstream: Upstream, args: JsonPost): Promise<UpstreamResponse> {
  return dispatchJson(upstream, args, StreamedAnswer);
}

type JsonPost = { path: string; body: unknown; headers?: Record<string, string>; signal: AbortSignal };

/** How a call's answer is read: a handler settling the call with its value or its error. */
type AnswerHandler<T> = new (
  signal: AbortSignal,
  timeouts: AnswerTimeouts,
  resolve: (value: T) => void,
  reject: (error: unknown) => void,
) => Dispatcher.DispatchHandler;

/** A JSON POST on the channel's pool, its answer read by `Answer`; none sent for a caller who already left. */
function dispatchJson<T>(upstream: Upstream, args: JsonPost, Answer: AnswerHandler<T>): Promise<T> {
  if (args.signal.aborted) return Promise.reject(abortReason(args.signal));
  return new Promise((resolve, reject) => {
    try {
      upstream.pool.dispatch(dispatchOptions(upstream, args), new Answer(args.signal, upstream.pool.answerTimeouts, resolve, reject));
    } catch (error) {
      reject(error);
    }
  });
}

/** A JSON POST's options, its timeouts left to the answer watch. */
function dispatchOptions(upstream: Upstream, args: JsonPost) {
  return {
    method: 'POST' as const,
    path: upstream.basePath + args.path,
    headers: { 'content-type': 'application/json', ...args.headers },
    body: JSON.stringify(args.body),
    // the connection queue (wait-bounded-pool.ts) reads it, to let a caller who leaves go at once
    signal: args.signal,
    // kept by the answer watch instead
    headersTimeout: 0,
    bodyTimeout: 0,
  };
}

/**
 * POSTs JSON and reads the whole answer as text, for answers that are not streamed. A non-2xx
 * answer throws UpstreamHttpError, as postJson does. This is undici's dispatch with a handler that
 * gathers the body, not request(), whose body stream and its listeners cost a call about 40 %
 * more CPU (measured against the sandbox at 50 calls at once: 40 against 28 µs a call). Its
 * headers and body timeouts are the channel's, kept by the answer watch (answer-watch.ts), not by
 * undici's timers.
 */
export function postForText(upstream: Upstream, args: JsonPost): Promise<string> {
  return dispatchJson(upstream, args, WholeAnswer);
}

/** Gathers an answer's body; settles once, when it completes or fails. */
class WholeAnswer extends TimedAnswer<string> implements Dispatcher.DispatchHandler {
  onHeaders(statusCode: number, rawHeaders: Buffer[]) {
    this.headersArrived(statusCode, rawHeaders);
    return true;
  }

  onData(chunk: Buffer) {
    this.dataArrived();
    if (this.succeeded()) this.keep(chunk);
    else this.keepErrorPart(chunk);
    return true;
  }

  onComplete() {
    this.finish();
    if (this.succeeded()) this.resolve(this.keptBody().toString('utf8'));
    else this.rejectAsErrorAnswer();
  }

  onError(error: Error) {
    this.finish();
    this.reject(error);
  }
}
