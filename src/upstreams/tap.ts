// The one stream object between an upstream's body and the caller, for protocols the gateway
// reads on the way (SSE, NDJSON). It frames and observes each chunk, and can hold part of its
// output back until a promise settles (the end-marker gate, pipeline/end-marker-gate.ts), so a
// metered stream costs one Transform and a few listeners, not a chain of them: with thousands of
// slow streams held open, each stage and each end-of-stream watcher is memory kept per stream.
import { type Readable, Transform, type TransformCallback } from 'node:stream';

/**
 * What a tap forwards for a chunk of the upstream's body (or at its end); undefined: nothing yet.
 * A step that writes event by event calls `eventRead(before)` after reading each event, with the
 * length of its output before that event's part (characters of a string output, bytes of a Buffer),
 * or a function that measures it when asked: the gate, once due, holds back from there on. It
 * answers true when it cut there (the step's output must then be what those lengths count).
 */
export type TapStep = (chunk: Buffer | undefined, eventRead: EventRead) => string | Buffer | undefined;
export type EventRead = (before: number | (() => number)) => boolean;

/** Holds the output back from the moment it is due (the stream's end marker was read) until `wait()` settles. */
export interface ForwardGate {
  due(): boolean;
  wait(): Promise<void>;
}

/**
 * The buffer of each stage a stream passes through, on both sides. Set, not Node's default (16 KiB
 * until Node 20, 64 KiB from Node 22), so that what a slow caller leaves buffered per stream is the
 * same on every Node.js the gateway runs on.
 */
export const STREAM_STAGE_BUFFER = 16 * 1024;

export class PassThroughTap extends Transform {
  private gate: ForwardGate | undefined;
  /** Whether the first output went out, without the gate (see forward). */
  private forwardedFirst = false;
  /** Where in the current step's output the gate became due, when a step said so. */
  private dueFrom: number | undefined;
  private readonly eventRead: EventRead = (before) => {
    if (this.dueFrom !== undefined || !this.gate?.due()) return false;
    this.dueFrom = typeof before === 'number' ? before : before();
    return true;
  };

  constructor(private readonly step: TapStep) {
    super({ highWaterMark: STREAM_STAGE_BUFFER });
  }

  /** Installs the gate; a tap has at most one. */
  gateForwarding(gate: ForwardGate): void {
    if (this.gate) throw new Error('this tap already has a gate');
    this.gate = gate;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.forward(chunk, callback);
  }

  /**
   * The chunks that queued while the tap was busy with the one before, read as one: one pass of
   * the step and one write on to the caller, instead of a turn of the stream machinery for each.
   */
  override _writev(chunks: { chunk: Buffer }[], callback: (error?: Error | null) => void): void {
    const joined = Buffer.concat(chunks.map(({ chunk }) => chunk));
    // 'buffer' is what a Writable passes for a Buffer (not a BufferEncoding to the type checker).
    Transform.prototype._write.call(this, joined, 'buffer' as BufferEncoding, callback);
  }

  override _flush(callback: TransformCallback): void {
    this.forward(undefined, callback);
  }

  private forward(chunk: Buffer | undefined, callback: TransformCallback) {
    let out: string | Buffer | undefined;
    this.dueFrom = undefined;
    try {
      out = this.step(chunk, this.eventRead);
    } catch (error) {
      return callback(error as Error);
    }
    if (this.gate?.due()) return this.forwardAfterSettle(this.gate, out, callback);
    if (out === undefined || out.length === 0) return queueMicrotask(callback);
    this.push(out);
    if (this.forwardedFirst) {
      // Done once the chunks of the same socket read have queued behind this one: they come next,
      // as one (_writev). Nothing waits for more to arrive.
      queueMicrotask(callback);
      return;
    }
    // The first output: the next chunks of the same socket read wait one turn, so that the call
    // answers its caller (in promises, before the turn ends) before the tap reads the rest.
    this.forwardedFirst = true;
    setImmediate(callback);
  }

  /**
   * The events before the end marker go on now: a stream that arrives in one burst reaches the
   * caller while its settle is written, and only the end waits for it.
   */
  private forwardAfterSettle(gate: ForwardGate, out: string | Buffer | undefined, callback: TransformCallback) {
    const from = this.dueFrom;
    if (out !== undefined && from !== undefined && from > 0) {
      this.push(cut(out, 0, from));
      out = from < out.length ? cut(out, from) : undefined;
    }
    gate.wait().then(() => callback(null, out), callback);
  }
}

const cut = (out: string | Buffer, start: number, end?: number) => (typeof out === 'string' ? out.slice(start, end) : out.subarray(start, end));

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
