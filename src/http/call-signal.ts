// The signal a metered call runs under: aborted at the call's deadline, and, for a stream, when the
// caller leaves before its answer is complete. The signal goes down into the upstream request,
// which stops with it. One controller and one timer per call, the timer cleared as soon as the
// call is over: AbortSignal.timeout and AbortSignal.any would leave a timer, weak references and a
// finalizer behind every call until the deadline passed or a full garbage collection ran.
//
// A call answered in one piece hands its controller back once it has answered, unaborted and with
// no listener left on its signal, and the next call runs under it: on Node 20 every new AbortSignal
// gets hidden classes of its own, which the young collector promotes with what they point to
// (and so outlive the call until a full collection). A call that failed keeps its controller (work
// of it may still be running), and so does a stream (parts of it may look at the signal after its
// response has closed).
import { getEventListeners } from 'node:events';
import type { ServerResponse } from 'node:http';
import { abortSlotFree, addAbortSlot } from '../abort-slot.js';

export interface CallSignal {
  signal: AbortSignal;
  /** The call is over: its deadline no longer matters. */
  done(): void;
  /** The call answered in one piece and nothing of it still runs: its controller may serve another call. */
  answered(): void;
}

/** The reason a deadline aborts with: a `TimeoutError`, as AbortSignal.timeout's, so it reads as one. */
const deadlinePassed = () => new DOMException('The operation was aborted due to timeout', 'TimeoutError');

/** Controllers of calls that are over, unaborted and unheard: as many as were ever running at once, up to this. */
const SPARE_LIMIT = 1024;
const spare: AbortController[] = [];

function handBack(controller: AbortController) {
  const { signal } = controller;
  // Its own lasting listener (abort-slot.ts) aside, none may be left.
  if (signal.aborted || spare.length >= SPARE_LIMIT || !abortSlotFree(signal) || getEventListeners(signal, 'abort').length > 1) return;
  spare.push(controller);
}

/** A controller for a call answered in one piece: its signal has a slot that upstream requests listen through. */
function newReusableController(): AbortController {
  const controller = new AbortController();
  addAbortSlot(controller.signal);
  return controller;
}

export function callSignal(raw: ServerResponse, { timeoutMs, stopsWhenCallerLeaves }: { timeoutMs: number; stopsWhenCallerLeaves: boolean }): CallSignal {
  const controller = stopsWhenCallerLeaves ? new AbortController() : (spare.pop() ?? newReusableController());
  const timer = setTimeout(() => controller.abort(deadlinePassed()), timeoutMs);
  timer.unref();
  const done = () => clearTimeout(timer);
  if (stopsWhenCallerLeaves) {
    raw.once('close', () => {
      done();
      if (!raw.writableFinished) controller.abort(new Error('client closed the connection'));
    });
  }
  const answered = () => {
    done();
    if (!stopsWhenCallerLeaves) handBack(controller);
  };
  return { signal: controller.signal, done, answered };
}

/** How many controllers wait to be used again (tests). */
export const spareControllers = () => spare.length;
