// A channel's headers and body timeouts, kept by one sweep of the requests on the wire instead of
// undici's timers. undici gives each request a timer object for its headers and another for its
// body (the two delays differ), and keeps a cleared one in its list until its next tick, up to a
// second later: at thousands of calls a second they outlive the young generation's collections,
// which copy and promote them (about 5 KB a call in flight, docs/benchmarks.md). Here a request
// on the wire is linked into a list, and a sweep every SWEEP_MS aborts the ones that waited past their
// bound, with undici's own errors, so that failover and the error answers read them as before.
//
// A list whose links are cleared when a request leaves it, not a Set: a Set's table is rehashed as it
// grows and shrinks, and the table it leaves behind, once old, still points at the requests it held;
// the young collector takes such pointers as live until the next full collection, so every call of
// the pool was promoted with all it held (measured: 8 to 10 full collections in 8 s against 1 or 2).
import { errors } from 'undici';

/** How often the requests on the wire are looked at: a timeout fires within two sweeps of its bound. */
export const SWEEP_MS = 250;

/** A request on the wire, as the sweep sees it (wait-bounded-pool.ts's SlotHandler). */
export interface SweptRequest {
  /** The list's links (null while not watched). */
  sweepPrev: SweptRequest | null;
  sweepNext: SweptRequest | null;
  /** The sweep's count when the request last showed life: sent, a byte of its answer, resumed. */
  quietSince: number;
  /** Life since the last sweep; the sweep moves it into `quietSince`. */
  stirred: boolean;
  /** Still waiting for the answer's headers (the headers bound applies, else the body's). */
  awaitingHeaders: boolean;
  /** The reader held the answer back at its last byte (backpressure): undici's body timeout does not run then either. */
  paused: boolean;
  /** Stops the request with `error` (undici destroys its connection). */
  timeOut(error: Error): void;
}

export class TimeoutSweep {
  #sweeps = 0;
  #timer: NodeJS.Timeout | undefined;
  #size = 0;
  /** The list's first and last requests. */
  #first: SweptRequest | null = null;
  #last: SweptRequest | null = null;
  /** Quiet sweeps after which a request times out (a request quiet for `n` sweeps has been quiet at least (n − 1) × sweepMs). */
  readonly #headersSweeps: number;
  readonly #bodySweeps: number;

  constructor(
    { headersMs, bodyMs }: { headersMs: number; bodyMs: number },
    readonly sweepMs = SWEEP_MS,
  ) {
    // 0 turns a timeout off, as in undici
    const sweepsFor = (ms: number) => (ms > 0 ? Math.ceil(ms / sweepMs) + 1 : Number.POSITIVE_INFINITY);
    this.#headersSweeps = sweepsFor(headersMs);
    this.#bodySweeps = sweepsFor(bodyMs);
  }

  /** Requests watched now. */
  get size(): number {
    return this.#size;
  }

  /** Whether its timer runs (only while requests are watched). */
  get sweeping(): boolean {
    return this.#timer !== undefined;
  }

  /** The request is on the wire from now, waiting for its headers (watched again: from now). */
  watch(request: SweptRequest): void {
    request.quietSince = this.#sweeps;
    request.stirred = false;
    request.awaitingHeaders = true;
    request.paused = false;
    if (request.sweepPrev !== null || this.#first === request) return;
    request.sweepPrev = this.#last;
    if (this.#last === null) this.#first = request;
    else this.#last.sweepNext = request;
    this.#last = request;
    this.#size++;
    this.#timer ??= setInterval(this.#sweep, this.sweepMs).unref();
  }

  /** The request is over (answered, failed or aborted); nothing if it was not watched. */
  unwatch(request: SweptRequest): void {
    if (request.sweepPrev === null && this.#first !== request) return;
    const { sweepPrev: prev, sweepNext: next } = request;
    if (prev === null) this.#first = next;
    else prev.sweepNext = next;
    if (next === null) this.#last = prev;
    else next.sweepPrev = prev;
    request.sweepPrev = null;
    request.sweepNext = null;
    this.#size--;
  }

  close(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
    while (this.#first !== null) this.unwatch(this.#first);
  }

  readonly #sweep = () => {
    const sweeps = ++this.#sweeps;
    // An idle pool stops sweeping; the next request starts it again.
    if (this.#size === 0) return this.close();
    for (let request = this.#first; request !== null; ) {
      const next = request.sweepNext; // before a time-out unlinks it
      if (request.stirred || request.paused) {
        request.stirred = false;
        request.quietSince = sweeps;
      } else if (sweeps - request.quietSince >= (request.awaitingHeaders ? this.#headersSweeps : this.#bodySweeps)) {
        this.unwatch(request);
        request.timeOut(request.awaitingHeaders ? new errors.HeadersTimeoutError() : new errors.BodyTimeoutError());
      }
      request = next;
    }
  };
}
