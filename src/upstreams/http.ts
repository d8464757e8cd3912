// The one way an adapter talks HTTP to an upstream: undici's dispatch on the channel's pool, with a
// handler of the gateway's for an answer read as it comes (streamed-answer.ts) or read whole.

import { type Dispatcher, errors } from 'undici';
import { abortReason, listenForAbort } from '../abort-slot.js';
import { answerWatch, deadlineIn, type WatchedAnswer } from './answer-watch.js';
import type { Upstream } from './pool.js';
import { StreamedAnswer, type UpstreamResponse } from './streamed-answer.js';
import { ERROR_BODY_LIMIT, errorOfAnswer } from './upstream-error.js';

export type { AnswerBody, UpstreamResponse } from './streamed-answer.js';
export { headerValue, retryAfterMsOf, UpstreamHttpError } from './upstream-error.js';

/**
 * POSTs JSON; resolves once a 2xx answer's headers arrive, its body to be read as it comes (a
 * stream's events, or a whole answer with `body.text()`). A non-2xx answer throws
 * UpstreamHttpError, its body limited. undici's dispatch with a handler of the gateway's
 * (streamed-answer.ts), timed by the answer watch, as postForText is.
 */
export function postJson(
  upstream: Upstream,
  args: { path: string; body: unknown; headers?: Record<string, string>; signal: AbortSignal },
): Promise<UpstreamResponse> {
  const { signal } = args;
  if (signal.aborted) return Promise.reject(abortReason(signal));
  return new Promise((resolve, reject) => {
    try {
      upstream.pool.dispatch(dispatchOptions(upstream, args), new StreamedAnswer(signal, upstream.pool.answerTimeouts, resolve, reject));
    } catch (error) {
      reject(error);
    }
  });
}

/** A JSON POST on the channel's pool, its timeouts left to the answer watch. */
function dispatchOptions(upstream: Upstream, args: { path: string; body: unknown; headers?: Record<string, string>; signal: AbortSignal }) {
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
export function postForText(upstream: Upstream, args: { path: string; body: unknown; headers?: Record<string, string>; signal: AbortSignal }): Promise<string> {
  const { signal } = args;
  if (signal.aborted) return Promise.reject(abortReason(signal));
  return new Promise((resolve, reject) => {
    try {
      upstream.pool.dispatch(dispatchOptions(upstream, args), new WholeAnswer(signal, upstream.pool.answerTimeouts, resolve, reject));
    } catch (error) {
      reject(error);
    }
  });
}

/**
 * Gathers an answer's body; settles once, when it completes or fails. Timed by the answer watch from
 * its connect: its headers within `headersMs`, then each part of its body within `bodyMs` of the
 * one before, as undici's own timeouts would (0: not timed).
 */
class WholeAnswer implements Dispatcher.DispatchHandler, WatchedAnswer {
  deadline = Number.POSITIVE_INFINITY;
  previous: WatchedAnswer | undefined = undefined;
  next: WatchedAnswer | undefined = undefined;
  watched = false;
  /** 0 until the headers arrive. */
  private statusCode = 0;
  private rawHeaders: Buffer[] = [];
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private abort: ((reason?: Error) => void) | undefined;
  private readonly onAbort = () => this.abort?.(abortReason(this.signal) as Error);
  private stopListening: (() => void) | undefined;

  constructor(
    private readonly signal: AbortSignal,
    private readonly timeouts: { headersMs: number; bodyMs: number },
    private readonly resolve: (text: string) => void,
    private readonly reject: (error: unknown) => void,
  ) {}

  onConnect(abort: (reason?: Error) => void) {
    if (this.signal.aborted) return abort(abortReason(this.signal) as Error);
    this.abort = abort;
    // undici may connect a request again: it is listened for once, and timed from the last connect
    this.stopListening ??= listenForAbort(this.signal, this.onAbort);
    this.deadline = deadlineIn(this.timeouts.headersMs);
    answerWatch.watch(this);
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[]) {
    this.statusCode = statusCode;
    this.rawHeaders = rawHeaders;
    this.deadline = deadlineIn(this.timeouts.bodyMs);
    return true;
  }

  onData(chunk: Buffer) {
    this.deadline = deadlineIn(this.timeouts.bodyMs);
    // an error body is kept to its first ERROR_BODY_LIMIT bytes; the rest is read and dropped
    if (this.succeeded() || this.size < ERROR_BODY_LIMIT) {
      this.chunks.push(chunk);
      this.size += chunk.length;
    }
    return true;
  }

  onComplete() {
    answerWatch.unwatch(this);
    this.stopListening?.();
    const body = Buffer.concat(this.chunks, this.size);
    if (this.succeeded()) return this.resolve(body.toString('utf8'));
    this.reject(errorOfAnswer(this.statusCode, this.rawHeaders, body));
  }

  onError(error: Error) {
    answerWatch.unwatch(this);
    this.stopListening?.();
    this.reject(error);
  }

  /** Past its deadline: undici's error for the phase it waited in, and its connection closed (by undici's abort). */
  expire() {
    this.abort?.(this.statusCode === 0 ? new errors.HeadersTimeoutError() : new errors.BodyTimeoutError());
  }

  private succeeded() {
    return this.statusCode >= 200 && this.statusCode < 300;
  }
}
