// An upstream's answer as it arrives (http.ts's postJson): its status and headers as soon as they
// come, and its body as a plain Readable fed by undici's dispatch. undici's request() would wrap the
// same bytes in its own body stream, whose request handler, header parsing, abort listeners and
// per-request timers cost a short stream more than the stream itself does; here the body is one
// Readable, and the channel's headers and body timeouts are kept by the answer watch
// (answer-watch.ts), as for an answer read whole.
import type { IncomingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';
import { type Dispatcher, errors } from 'undici';
import { deadlineIn } from './answer-watch.js';
import { TimedAnswer } from './timed-answer.js';

/** What a body buffers before undici stops reading its connection: undici's own default for a body. */
const BODY_BUFFER = 64 * 1024;

export interface UpstreamResponse {
  statusCode: number;
  headers: IncomingHttpHeaders;
  body: AnswerBody;
}

/** An answer's body. Destroying it before its end stops the upstream call. */
export class AnswerBody extends Readable {
  constructor(private readonly answer: StreamedAnswer) {
    super({ highWaterMark: BODY_BUFFER });
  }

  override _read(): void {
    this.answer.readMore();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (!this.readableEnded) this.answer.stop(error ?? new errors.RequestAbortedError());
    // Failed before anyone read it: its 'error' and 'close' wait a turn, for the caller who is
    // about to take the body (a promise away) to be listening.
    if (this.listenerCount('data') === 0 && this.listenerCount('readable') === 0) setImmediate(callback, error);
    else callback(error);
  }

  /** The whole body as UTF-8 text. */
  async text(): Promise<string> {
    const parts: Buffer[] = [];
    for await (const chunk of this) parts.push(chunk as Buffer);
    return Buffer.concat(parts).toString('utf8');
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text());
  }

  /** Reads the body to its end and drops it. */
  async dump(): Promise<void> {
    for await (const _ of this);
  }
}

/** The response's headers as node:http gives them: names in lower case, a repeated one as a list. */
export function headersOf(rawHeaders: Buffer[]): IncomingHttpHeaders {
  const headers: Record<string, string | string[]> = Object.create(null);
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!.toString('latin1').toLowerCase();
    const value = rawHeaders[i + 1]!.toString('latin1');
    const before = headers[name];
    if (before === undefined) headers[name] = value;
    else if (typeof before === 'string') headers[name] = [before, value];
    else before.push(value);
  }
  return headers as IncomingHttpHeaders;
}

const ignore = () => {};

/**
 * Resolves with the response once a 2xx answer's headers arrive, its body then fed as it comes; an
 * error answer's body is read (its first ERROR_BODY_LIMIT bytes kept) and rejected as
 * UpstreamHttpError. Timed by the answer watch from its connect: its headers within `headersMs`,
 * then each part of its body within `bodyMs` of the one before, except while its reader holds the
 * body back, as undici's own timers do (0: not timed).
 */
export class StreamedAnswer extends TimedAnswer<UpstreamResponse> implements Dispatcher.DispatchHandler {
  private body: AnswerBody | undefined;
  /** undici stopped reading the connection because the body's reader is behind. */
  private paused = false;
  private resume: (() => void) | undefined;

  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void) {
    if (statusCode < 200) return true; // informational (103 Early Hints): the answer itself follows
    this.headersArrived(statusCode, rawHeaders);
    this.resume = resume;
    if (this.succeeded()) {
      this.body = new AnswerBody(this);
      this.resolve({ statusCode, headers: headersOf(rawHeaders), body: this.body });
    }
    return true;
  }

  onData(chunk: Buffer) {
    this.dataArrived();
    if (!this.body) {
      this.keepErrorPart(chunk);
      return true;
    }
    if (this.body.push(chunk)) return true;
    // The reader is behind: undici stops reading until it asks for more, and the quiet is not timed.
    this.paused = true;
    this.heard = false;
    this.deadline = Number.POSITIVE_INFINITY;
    return false;
  }

  onComplete() {
    this.finish();
    if (this.body) this.body.push(null);
    else this.rejectAsErrorAnswer();
  }

  onError(error: Error) {
    this.finish();
    const body = this.body;
    if (!body) return this.reject(error);
    // After the handlers undici queued for this answer, as undici does for its own body streams.
    if (!body.destroyed) queueMicrotask(() => body.on('error', ignore).destroy(error));
  }

  /** The body's reader wants more: reading resumes if undici had stopped, timed again from now. */
  readMore() {
    if (!this.paused) return;
    this.paused = false;
    this.deadline = deadlineIn(this.timeouts.bodyMs);
    this.resume?.();
  }

  /** The body was left before its end: the call stops, and its connection with it. */
  stop(reason: Error) {
    this.abort?.(reason);
  }
}
