// An undici Pool whose callers wait for a connection in a queue of our own: the wait is measured,
// bounded, and a caller that gives up leaves the queue at once.
//
// Why not undici's own queue: a request queued there cannot be taken back. Its signal only marks it,
// so the caller's promise settles when a connection frees up (minutes, behind long streams), and the
// request then aborts on that connection, destroying the socket. Here a request reaches undici only
// when a connection is free for it; until then it can time out or be abandoned without a trace.
import type { Duplex } from 'node:stream';
import { type Dispatcher, Pool } from 'undici';
import { listenForAbort } from '../abort-slot.js';
import type { AnswerTimeouts } from './timed-answer.js';

/** The call waited `connection_wait_ms` for a connection of the channel and was not sent. */
export class ConnectionWaitTimeoutError extends Error {
  override name = 'ConnectionWaitTimeoutError';
  readonly code = 'TOLLROUTE_CONNECTION_WAIT_TIMEOUT';
  /** Nothing reached the upstream (the pipeline bills nothing for a call never sent). */
  readonly sent = false;
  constructor(
    readonly channel: string,
    readonly waitedMs: number,
  ) {
    super(`no connection to channel ${channel} became free within ${Math.round(waitedMs)} ms; the call was not sent`);
  }
}

/** The caller gave up while its call waited for a connection: nothing reached the upstream. */
export class LeftBeforeSendError extends Error {
  override name = 'LeftBeforeSendError';
  readonly sent = false;
  constructor(reason: Error) {
    super('the caller left while the call waited for a connection; it was not sent', { cause: reason });
  }
}

export interface ConnectionWaitObserver {
  /** Time from dispatch until the request was on a connection (queue and connecting included). */
  observeConnectionWait(channel: string, seconds: number): void;
  /** A call refused after waiting the whole bound. */
  countConnectionWaitTimeout(channel: string): void;
}

export interface WaitBoundedPoolOptions extends Pool.Options {
  channel: string;
  /** Requests on the wire at once; undici's pool gets the same number of connections. */
  connections: number;
  /** The longest a request waits in the queue for a free connection; then it fails unsent. */
  maxWaitMs: number;
  observer?: ConnectionWaitObserver;
}

type Handler = Dispatcher.DispatchHandler;

export class WaitBoundedPool extends Pool {
  readonly #channel: string;
  readonly #slots: number;
  readonly #maxWaitMs: number;
  readonly #observer: ConnectionWaitObserver | undefined;
  /** The headers and body timeouts undici keeps for this pool's requests; an answer read whole keeps them itself (http.ts). */
  readonly answerTimeouts: AnswerTimeouts;
  #inFlight = 0;
  // insertion-ordered, so the first entry is the longest waiting; delete is O(1) for a caller who leaves
  readonly #queue = new Set<QueuedRequest>();

  constructor(origin: string, { channel, connections, maxWaitMs, observer, ...options }: WaitBoundedPoolOptions) {
    super(origin, { ...options, connections });
    this.#channel = channel;
    this.#slots = connections;
    this.#maxWaitMs = maxWaitMs;
    this.#observer = observer;
    // undici's defaults when not given: 300 s each
    this.answerTimeouts = { headersMs: options.headersTimeout ?? 300_000, bodyMs: options.bodyTimeout ?? 300_000 };
  }

  /** Requests on the wire now (at most `connections`). */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** Requests waiting for a connection now. */
  get waiting(): number {
    return this.#queue.size;
  }

  override dispatch(options: Dispatcher.DispatchOptions, handler: Handler): boolean {
    // Handlers in undici's newer style come only from interceptors, which tollroute does not use;
    // every undici API (request, stream, pipeline) dispatches the style wrapped here.
    if (handler.onRequestStart) return super.dispatch(options, handler);
    const startedAt = performance.now();
    if (this.#inFlight < this.#slots && this.#queue.size === 0) {
      this.#send(options, handler, startedAt);
      return true;
    }
    const signal = abortSignalOf(options);
    if (signal?.aborted) {
      handler.onError?.(abortReason(signal));
      return true;
    }
    const queued: QueuedRequest = { options, handler, startedAt, timer: undefined, stopListening: undefined };
    queued.timer = setTimeout(() => this.#timeOut(queued), this.#maxWaitMs);
    if (signal) {
      queued.stopListening = listenForAbort(signal, () => this.#leave(queued, new LeftBeforeSendError(abortReason(signal))));
    }
    this.#queue.add(queued);
    // true, not false: false promises a 'drain' event, and callers of request() never wait for one
    return true;
  }

  #send(options: Dispatcher.DispatchOptions, handler: Handler, startedAt: number) {
    this.#inFlight++;
    super.dispatch(options, new SlotHandler({ handler, startedAt, onConnected: this.#onConnected, release: this.#releaseSlot }));
  }

  // built once, not per call
  readonly #onConnected = (seconds: number) => this.#observer?.observeConnectionWait(this.#channel, seconds);
  readonly #releaseSlot = () => this.#release();

  #release() {
    this.#inFlight--;
    const next = this.#queue.values().next();
    if (next.done || this.#inFlight >= this.#slots) return;
    const queued = next.value;
    this.#unqueue(queued);
    this.#send(queued.options, queued.handler, queued.startedAt);
  }

  #unqueue(queued: QueuedRequest) {
    this.#queue.delete(queued);
    clearTimeout(queued.timer);
    queued.stopListening?.();
  }

  #timeOut(queued: QueuedRequest) {
    const waitedMs = performance.now() - queued.startedAt;
    this.#observer?.observeConnectionWait(this.#channel, waitedMs / 1000);
    this.#observer?.countConnectionWaitTimeout(this.#channel);
    this.#leave(queued, new ConnectionWaitTimeoutError(this.#channel, waitedMs));
  }

  /** Out of the queue, unsent: the caller hears `reason` now, and undici never saw the request. */
  #leave(queued: QueuedRequest, reason: Error) {
    if (!this.#queue.has(queued)) return;
    this.#unqueue(queued);
    queued.handler.onError?.(reason);
  }
}

/** The caller's signal, which undici's request() leaves in the dispatch options (an AbortSignal here). */
function abortSignalOf(options: Dispatcher.DispatchOptions): AbortSignal | undefined {
  const signal = (options as { signal?: unknown }).signal;
  return signal instanceof AbortSignal ? signal : undefined;
}

const abortReason = (signal: AbortSignal): Error =>
  signal.reason instanceof Error ? signal.reason : new DOMException('This operation was aborted', 'AbortError');

interface QueuedRequest {
  options: Dispatcher.DispatchOptions;
  handler: Handler;
  startedAt: number;
  timer: NodeJS.Timeout | undefined;
  /** Stops hearing the caller's signal (abort-slot.ts), once the request leaves the queue. */
  stopListening: (() => void) | undefined;
}

/** Passes every event on; measures the wait at the first connect and frees the slot when the request ends. */
class SlotHandler implements Handler {
  #released = false;
  #connected = false;
  private readonly handler: Handler;

  constructor(private readonly slot: { handler: Handler; startedAt: number; onConnected(waitSeconds: number): void; release(): void }) {
    this.handler = slot.handler;
  }

  #end() {
    if (this.#released) return;
    this.#released = true;
    this.slot.release();
  }

  onConnect(abort: (err?: Error) => void) {
    // undici may connect a request again when the connection it was on closes before it started
    if (!this.#connected) {
      this.#connected = true;
      this.slot.onConnected((performance.now() - this.slot.startedAt) / 1000);
    }
    return this.handler.onConnect?.(abort);
  }

  onResponseStarted() {
    return this.handler.onResponseStarted?.();
  }

  onHeaders(statusCode: number, headers: Buffer[], resume: () => void, statusText: string) {
    return this.handler.onHeaders?.(statusCode, headers, resume, statusText) ?? true;
  }

  onData(chunk: Buffer) {
    return this.handler.onData?.(chunk) ?? true;
  }

  onBodySent(chunkSize: number, totalBytesSent: number) {
    return this.handler.onBodySent?.(chunkSize, totalBytesSent);
  }

  onUpgrade(statusCode: number, headers: Buffer[] | string[] | null, socket: Duplex) {
    this.#end(); // the socket leaves the pool with the caller
    return this.handler.onUpgrade?.(statusCode, headers, socket);
  }

  onComplete(trailers: string[] | null) {
    this.#end();
    return this.handler.onComplete?.(trailers);
  }

  onError(err: Error) {
    this.#end();
    return this.handler.onError?.(err);
  }
}
