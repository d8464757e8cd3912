// When each key was last used, for its account's key list. Authentication is on every call's path,
// so it only notes the time in memory; the times are written in one transaction every few seconds
// (and at shutdown), never one write per call. A crash loses at most one interval of notes.
import { recordKeyUses } from '../store/api-keys.js';
import type { Store } from '../store/open.js';

export interface KeyUseRecorder {
  /** The key authenticated a request now. */
  used(keyId: string): void;
  /** Writes the times noted since the last flush. */
  flush(): Promise<void>;
  /** Stops the timer and writes what is left. */
  stop(): Promise<void>;
}

interface Logger {
  warn(obj: object, msg: string): void;
}

export function createKeyUseRecorder(
  store: Store,
  { flushEveryMs = 5_000, log, now = Date.now }: { flushEveryMs?: number; log?: Logger; now?: () => number } = {},
): KeyUseRecorder {
  let pending = new Map<string, number>();
  let flushing: Promise<void> = Promise.resolve();

  function flush(): Promise<void> {
    const uses = pending;
    if (uses.size === 0) return flushing;
    pending = new Map();
    // One flush at a time, in order, so a later time is never overwritten by an earlier one.
    flushing = flushing.then(() =>
      recordKeyUses(store.db, uses).catch((error: unknown) => {
        // Only the key list's "last used" is behind; kept for the next flush unless newer notes came.
        for (const [keyId, at] of uses) if (!pending.has(keyId)) pending.set(keyId, at);
        log?.warn({ err: error, keys: uses.size }, 'could not record when keys were last used; will retry');
      }),
    );
    return flushing;
  }

  const timer = setInterval(() => void flush(), flushEveryMs);
  timer.unref();

  return {
    used: (keyId) => void pending.set(keyId, now()),
    flush,
    async stop() {
      clearInterval(timer);
      await flush();
    },
  };
}
