// The one way an adapter talks HTTP to an upstream: undici.request on the channel's pool.

import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import { type Dispatcher, errors } from 'undici';
import { listenForAbort } from '../abort-slot.js';
import { answerWatch, type WatchedAnswer } from './answer-watch.js';
import type { Upstream } from './pool.js';

const ERROR_BODY_LIMIT = 64 * 1024;
// What a log line shows of an error body: enough to diagnose, too little to copy a prompt out of.
const LOGGED_BODY_LIMIT = 300;

/** An upstream answered with a non-2xx status. `body` is its (size-limited) text. */
export class UpstreamHttpError extends Error {
  override name = 'UpstreamHttpError';
  declare readonly body: string;
  /** The start of the body, the only part a log line carries (`body` is kept off the logs). */
  readonly bodyExcerpt: string;
  /** How long the upstream asked to be left alone (its Retry-After), when it said. */
  readonly retryAfterMs: number | undefined;
  constructor(
    readonly statusCode: number,
    body: string,
    readonly contentType: string | undefined,
    retryAfter?: string,
  ) {
    super(`upstream answered ${statusCode}`);
    this.retryAfterMs = retryAfterMsOf(retryAfter);
    // Not enumerable: log serializers copy enumerable fields, and an error body may quote a prompt.
    Object.defineProperty(this, 'body', { value: body, enumerable: false });
    this.bodyExcerpt = body.length > LOGGED_BODY_LIMIT ? `${body.slice(0, LOGGED_BODY_LIMIT)}…` : body;
  }

  /** The upstream's own reason, from the error shapes upstreams use ({error: {message}}, {error}, {message}). */
  reason(): string | undefined {
    try {
      const parsed = JSON.parse(this.body) as { error?: { message?: unknown } | string; message?: unknown };
      const message = typeof parsed.error === 'string' ? parsed.error : (parsed.error?.message ?? parsed.message);
      return typeof message === 'string' && message !== '' ? message : undefined;
    } catch {
      return undefined; // not JSON: the status says enough
    }
  }
}

export interface UpstreamResponse {
  statusCode: number;
  headers: IncomingHttpHeaders;
  body: Readable & { dump(opts?: { limit: number }): Promise<void>; text(): Promise<string>; json(): Promise<unknown> };
}

export async function postJson(
  upstream: Upstream,
  args: { path: string; body: unknown; headers?: Record<string, string>; signal: AbortSignal },
): Promise<UpstreamResponse> {
  const response = await upstream.pool.request({
    method: 'POST',
    path: upstream.basePath + args.path,
    headers: { 'content-type': 'application/json', ...args.headers },
    body: JSON.stringify(args.body),
    signal: args.signal,
  });
  if (response.statusCode >= 200 && response.statusCode < 300) return response as unknown as UpstreamResponse;
  throw new UpstreamHttpError(
    response.statusCode,
    await readLimited(response.body),
    headerValue(response.headers['content-type']),
    headerValue(response.headers['retry-after']),
  );
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
    const options = {
      method: 'POST' as const,
      path: upstream.basePath + args.path,
      headers: { 'content-type': 'application/json', ...args.headers },
      body: JSON.stringify(args.body),
      // the connection queue (wait-bounded-pool.ts) reads it, to let a caller who leaves go at once
      signal,
      // kept by the answer watch instead (WholeAnswer)
      headersTimeout: 0,
      bodyTimeout: 0,
    };
    try {
      upstream.pool.dispatch(options, new WholeAnswer(signal, upstream.pool.answerTimeouts, resolve, reject));
    } catch (error) {
      reject(error);
    }
  });
}

/** A deadline `ms` from now; none when `ms` is 0 (undici's meaning of a timeout of 0). */
const deadlineIn = (ms: number) => (ms > 0 ? performance.now() + ms : Number.POSITIVE_INFINITY);

const abortReason = (signal: AbortSignal): unknown => signal.reason ?? new DOMException('This operation was aborted', 'AbortError');

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
    const text = body.subarray(0, ERROR_BODY_LIMIT).toString('utf8');
    this.reject(new UpstreamHttpError(this.statusCode, text, this.header('content-type'), this.header('retry-after')));
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

  /** A header's first value, from undici's raw [name, value, …] list. */
  private header(name: string): string | undefined {
    for (let i = 0; i < this.rawHeaders.length; i += 2) {
      if (this.rawHeaders[i]!.toString('latin1').toLowerCase() === name) return this.rawHeaders[i + 1]!.toString('latin1');
    }
    return undefined;
  }
}

/** Retry-After as seconds or an HTTP date, in ms from now; undefined when absent or unreadable. */
export function retryAfterMsOf(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return seconds >= 0 ? seconds * 1000 : undefined;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** Reads at most ERROR_BODY_LIMIT bytes of an error body, then drops the rest. */
async function readLimited(body: Readable): Promise<string> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const buffer = chunk as Buffer;
    if (size + buffer.length > ERROR_BODY_LIMIT) {
      parts.push(buffer.subarray(0, ERROR_BODY_LIMIT - size));
      body.destroy();
      break;
    }
    parts.push(buffer);
    size += buffer.length;
  }
  return Buffer.concat(parts).toString('utf8');
}

export function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
