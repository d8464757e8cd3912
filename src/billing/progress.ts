// Streams record what they have delivered as they go, so that a crash bills it (DESIGN §3: "from
// the progress they recorded"). One timer writes the progress of every open stream in one
// transaction, and only of streams whose figure changed, so many slow streams cost one write.
import { recordProgress } from '../store/holds.js';
import type { Store } from '../store/open.js';
import type { RecordedProgress } from './recovery.js';

export interface ProgressRecorder {
  /** Follows a stream's hold until the returned function is called (when the stream ends). */
  track(holdId: string, read: () => RecordedProgress | undefined): () => void;
  /** Writes what changed now (tests; the timer does it every interval). */
  flush(): Promise<void>;
  stop(): void;
}

export function createProgressRecorder(deps: { store: Store; intervalMs: number; log: { warn(obj: object, msg?: string): void } }): ProgressRecorder {
  const streams = new Map<string, { read: () => RecordedProgress | undefined; written: number }>();
  let flushing: Promise<void> | undefined;

  async function write() {
    const changed: { id: string; progress: string }[] = [];
    const charges: [string, number][] = [];
    for (const [holdId, stream] of streams) {
      const progress = stream.read();
      if (!progress || progress.charge_micros === stream.written) continue;
      changed.push({ id: holdId, progress: JSON.stringify(progress) });
      charges.push([holdId, progress.charge_micros]);
    }
    if (changed.length === 0) return;
    try {
      await deps.store.db.transaction().execute((trx) => recordProgress(trx, changed));
      for (const [holdId, charge] of charges) {
        const stream = streams.get(holdId);
        if (stream) stream.written = charge;
      }
    } catch (error) {
      deps.log.warn({ err: error, streams: changed.length }, 'recording stream progress failed; the next interval tries again');
    }
  }

  const flush = () => (flushing ??= write().finally(() => (flushing = undefined)));
  const timer = setInterval(() => void flush(), deps.intervalMs);
  timer.unref();

  return {
    track(holdId, read) {
      streams.set(holdId, { read, written: 0 });
      return () => streams.delete(holdId);
    },
    flush,
    stop: () => clearInterval(timer),
  };
}
