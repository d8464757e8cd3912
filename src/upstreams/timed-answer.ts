// What every upstream answer handler of http.ts shares: its caller's signal heard for the length of
// the call, its headers and body timeouts kept by the answer watch (answer-watch.ts) instead of
// undici's timers, failing with undici's own errors, and an error answer's body kept for the
// UpstreamHttpError it becomes.
import { errors } from 'undici';
import { abortReason, listenForAbort } from '../abort-slot.js';
import { answerWatch, deadlineIn, type WatchedAnswer } from './answer-watch.js';
import { ERROR_BODY_LIMIT, errorOfAnswer } from './upstream-error.js';

/** A channel's timeouts for an answer: its headers, then each part of its body (0: not timed). */
export interface AnswerTimeouts {
  headersMs: number;
  bodyMs: number;
}

/**
 * Timed from its connect: its headers within `headersMs`, then each part of its body within
 * `bodyMs` of the one before. A subclass calls `headersArrived` and `dataArrived` as they come, and
 * `finish` when the answer completes or fails; it settles the call once, with `resolve` or `reject`.
 */
export abstract class TimedAnswer<T> implements WatchedAnswer {
  deadline = Number.POSITIVE_INFINITY;
  heard = false;
  previous: WatchedAnswer | undefined = undefined;
  next: WatchedAnswer | undefined = undefined;
  watched = false;
  /** 0 until the headers arrive. */
  protected statusCode = 0;
  protected rawHeaders: Buffer[] = [];
  protected abort: ((reason?: Error) => void) | undefined;
  private readonly onAbort = () => this.abort?.(abortReason(this.signal) as Error);
  private stopListening: (() => void) | undefined;
  /** The body's parts kept so far (keep, keepErrorPart). */
  private readonly parts: Buffer[] = [];
  private keptSize = 0;

  constructor(
    private readonly signal: AbortSignal,
    protected readonly timeouts: AnswerTimeouts,
    protected readonly resolve: (value: T) => void,
    protected readonly reject: (error: unknown) => void,
  ) {}

  onConnect(abort: (reason?: Error) => void) {
    if (this.signal.aborted) return abort(abortReason(this.signal) as Error);
    this.abort = abort;
    // undici may connect a request again: it is listened for once, and timed from the last connect
    this.stopListening ??= listenForAbort(this.signal, this.onAbort);
    this.deadline = deadlineIn(this.timeouts.headersMs);
    answerWatch.watch(this);
  }

  /** Past its deadline: undici's error for the phase it waited in, and its connection closed (by undici's abort). */
  expire() {
    this.abort?.(this.statusCode === 0 ? new errors.HeadersTimeoutError() : new errors.BodyTimeoutError());
  }

  protected headersArrived(statusCode: number, rawHeaders: Buffer[]) {
    this.statusCode = statusCode;
    this.rawHeaders = rawHeaders;
    this.deadline = deadlineIn(this.timeouts.bodyMs);
  }

  get quietMs(): number {
    return this.timeouts.bodyMs;
  }

  /** A part of the body came: the watch's next sweep times the answer again from then. */
  protected dataArrived() {
    this.heard = true;
  }

  /** The answer completed or failed: no longer timed, nor listening to its caller. */
  protected finish() {
    answerWatch.unwatch(this);
    this.stopListening?.();
  }

  protected succeeded() {
    return this.statusCode >= 200 && this.statusCode < 300;
  }

  protected keep(part: Buffer) {
    this.parts.push(part);
    this.keptSize += part.length;
  }

  /** An error answer's body is kept to its first ERROR_BODY_LIMIT bytes; the rest is read and dropped. */
  protected keepErrorPart(part: Buffer) {
    if (this.keptSize < ERROR_BODY_LIMIT) this.keep(part);
  }

  protected keptBody(): Buffer {
    return Buffer.concat(this.parts, this.keptSize);
  }

  /** The error answer, with what was kept of its body, as UpstreamHttpError. */
  protected rejectAsErrorAnswer() {
    this.reject(errorOfAnswer(this.statusCode, this.rawHeaders, this.keptBody()));
  }
}
