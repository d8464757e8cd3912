// Hearing a signal's abort for the length of one upstream request. A call's signal passes from
// call to call (http/call-signal.ts), so it carries one listener of its own for good, and a request
// plugs its handler into that listener's slot: EventTarget's addEventListener and
// removeEventListener, once each per upstream request, cost a plain call about 1.5 % of its CPU
// (measured with `npm run bench -- --compare`). Any other signal is listened to the usual way.

interface AbortSlot {
  handler: (() => void) | undefined;
}

const slots = new WeakMap<AbortSignal, AbortSlot>();

/** Gives `signal` its one lasting listener, which calls the handler plugged in when it aborts. */
export function addAbortSlot(signal: AbortSignal): void {
  const slot: AbortSlot = { handler: undefined };
  signal.addEventListener('abort', () => slot.handler?.(), { once: true });
  slots.set(signal, slot);
}

/** Whether nothing is plugged into `signal`'s slot (true for a signal without one). */
export const abortSlotFree = (signal: AbortSignal): boolean => slots.get(signal)?.handler === undefined;

/**
 * Calls `handler` when `signal` aborts, until the returned function stops it. Through the signal's
 * slot when it has a free one, else as an ordinary listener.
 */
export function listenForAbort(signal: AbortSignal, handler: () => void): () => void {
  const slot = slots.get(signal);
  if (slot && slot.handler === undefined) {
    slot.handler = handler;
    return () => {
      if (slot.handler === handler) slot.handler = undefined;
    };
  }
  signal.addEventListener('abort', handler, { once: true });
  return () => signal.removeEventListener('abort', handler);
}

/** Why `signal` aborted: its reason, or the DOM's AbortError when it gave none. */
export const abortReason = (signal: AbortSignal): unknown => signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
