// The charge a stream earned is written before its answer completes (DESIGN §3): every chunk goes on
// as it arrives, except the one that carries the protocol's end marker, which waits until the settle
// has landed (or been kept for a retry). A crash can then never leave a caller with a whole answer
// and the gateway with no bill for it.
import { pipeline, type Readable, Transform, type TransformCallback } from 'node:stream';
import type { StreamMeter } from './types.js';

/**
 * `body` passed through; once the meter has seen the end marker (the adapter's reader sees each
 * chunk before it reaches this point), `settle` runs before that chunk, or before the end, goes on.
 */
export function holdEndMarkerForSettle(body: Readable, meter: StreamMeter, settle: () => Promise<void>): Readable {
  const afterSettle = (callback: TransformCallback, chunk?: unknown) => {
    if (!meter.completed) return callback(null, chunk);
    settle().then(() => callback(null, chunk), callback);
  };
  const gate = new Transform({
    transform: (chunk, _encoding, callback) => afterSettle(callback, chunk),
    flush: (callback) => afterSettle(callback),
  });
  // pipeline: the caller leaving (gate destroyed) stops the upstream, and an upstream error reaches the gate.
  pipeline(body, gate, () => {});
  return gate;
}
