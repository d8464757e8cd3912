// The charge a stream earned is written before its answer completes (DESIGN §3): every chunk goes on
// as it arrives, except the protocol's end marker (and what follows it), which waits until the settle
// has landed (or been kept for a retry). A crash can then never leave a caller with a whole answer
// and the gateway with no bill for it. The gateway's own taps cut a chunk at its end marker, so the
// events before it go on at once; any other body is held from the chunk that completed it.
import { pipeline, type Readable, Transform, type TransformCallback } from 'node:stream';
import { PassThroughTap, STREAM_STAGE_BUFFER } from '../upstreams/tap.js';
import type { StreamMeter } from './types.js';

/**
 * `body` passed through; once the meter has seen the end marker (the adapter's reader sees each
 * chunk before it reaches this point), `settle` runs before that chunk, or before the end, goes on.
 * A tap of the gateway's own is gated in place; any other body gets a gate stage of its own.
 */
export function holdEndMarkerForSettle(body: Readable, meter: StreamMeter, settle: () => Promise<void>): Readable {
  if (body instanceof PassThroughTap) {
    body.gateForwarding({ due: () => meter.completed, wait: settle });
    return body;
  }
  const afterSettle = (callback: TransformCallback, chunk?: unknown) => {
    if (!meter.completed) return callback(null, chunk);
    settle().then(() => callback(null, chunk), callback);
  };
  const stage = new Transform({
    highWaterMark: STREAM_STAGE_BUFFER,
    transform: (chunk, _encoding, callback) => afterSettle(callback, chunk),
    flush: (callback) => afterSettle(callback),
  });
  // pipeline: the caller leaving (stage destroyed) stops the upstream, and an upstream error reaches the stage.
  pipeline(body, stage, () => {});
  return stage;
}
