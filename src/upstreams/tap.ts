// The one stream object between an upstream's body and the caller, for protocols the gateway
// reads on the way (SSE, NDJSON). It frames and observes each chunk, and can hold a chunk back
// until a promise settles (the end-marker gate, pipeline/end-marker-gate.ts), so a metered stream
// costs one Transform and a few listeners, not a chain of them: with thousands of slow streams
// held open, each stage and each end-of-stream watcher is memory kept per stream.
import { type Readable, Transform, type TransformCallback } from 'node:stream';

/** What a tap forwards for a chunk of the upstream's body (or at its end); undefined: nothing yet. */
export type TapStep = (chunk: Buffer | undefined) => string | Buffer | undefined;

/** Asked before each forward: a promise to wait for first, or undefined to forward at once. */
export type ForwardGate = () => Promise<void> | undefined;

export class PassThroughTap extends Transform {
  private gate: ForwardGate | undefined;

  constructor(private readonly step: TapStep) {
    super();
  }

  /** Installs the gate; a tap has at most one. */
  gateForwarding(gate: ForwardGate): void {
    if (this.gate) throw new Error('this tap already has a gate');
    this.gate = gate;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.forward(chunk, callback);
  }

  override _flush(callback: TransformCallback): void {
    this.forward(undefined, callback);
  }

  private forward(chunk: Buffer | undefined, callback: TransformCallback) {
    let out: string | Buffer | undefined;
    try {
      out = this.step(chunk);
    } catch (error) {
      return callback(error as Error);
    }
    const waiting = this.gate?.();
    if (!waiting) return callback(null, out);
    waiting.then(() => callback(null, out), callback);
  }
}

/**
 * `body` flows into `tap` with backpressure. An error of the body fails the tap, and the tap
 * closing early (the caller left) destroys the body, which stops the upstream call. A lighter
 * `pipeline(body, tap)`: plain listeners, no end-of-stream watchers.
 */
export function feedTap(body: Readable, tap: PassThroughTap): PassThroughTap {
  body.pipe(tap);
  body.once('error', (error) => tap.destroy(error));
  body.once('close', () => {
    // A body that closes without its end and without an error (destroyed elsewhere) breaks the stream.
    if (!body.readableEnded && !tap.destroyed) tap.destroy(new Error('the upstream body closed before its end'));
  });
  tap.once('close', () => {
    if (!body.destroyed) body.destroy();
  });
  return tap;
}
