import { once } from 'node:events';
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import { malformedBody, malformedChunk, malformedFrame, type StreamFraming } from './malformed.js';

/** The fault rule's behaviours that shape an answer once the handler writes it (faults.ts documents each). */
export interface ReplyFaults {
  readonly dropAfterChunks?: number | undefined;
  readonly errorAfterChunks?: number | undefined;
  readonly chunkDelayMs?: number | undefined;
  readonly malformed?: boolean | undefined;
  readonly headers?: Readonly<Record<string, string>> | undefined;
}

export const SSE_HEADERS: OutgoingHttpHeaders = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
};

/** One `data:` event; a string payload (`[DONE]`) is written as is. */
export function sseData(payload: unknown): string {
  return `data: ${typeof payload === 'string' ? payload : JSON.stringify(payload)}\n\n`;
}

/** A named event, for the protocols whose `event:` line names the payload. */
export function sseEvent(name: string, payload: unknown): string {
  return `event: ${name}\ndata: ${JSON.stringify(payload)}\n\n`;
}

/** Each chunk written out as it is made: a stream is never held whole. */
export function* mapChunks<T>(chunks: Iterable<T>, write: (chunk: T) => string): Generator<string> {
  for (const chunk of chunks) yield write(chunk);
}

/** The message of every mid-stream error an `error_after_chunks` fault makes, so a test can tell it is ours. */
export const midStreamErrorMessage = (sent: number) => `sandbox fault: error after ${sent} chunks`;

/** A streamed answer, as a protocol handler describes it. */
export interface StreamAnswer {
  readonly status?: number;
  readonly headers: OutgoingHttpHeaders;
  /**
   * Made one at a time; the last one is the protocol's end marker (`[DONE]`, `message_stop`…). Text, or
   * for a binary protocol (Bedrock's event stream) one whole frame per Buffer.
   */
  readonly chunks: Iterable<string | Buffer>;
  /** The protocol's own mid-stream error, sent by an `error_after_chunks` fault after `sent` chunks. */
  readonly errorChunk: (sent: number) => string | Buffer;
}

interface ChunkPlace {
  readonly last: boolean;
  readonly framing: StreamFraming;
  readonly errorChunk: (sent: number) => string | Buffer;
}

/**
 * The answer side of one request. Handlers write through it so that the fault rule's answer behaviours
 * (headers, drop, error, malformed body, per-chunk delay) apply to every protocol alike, and so backpressure
 * is honoured in one place.
 */
export class Reply {
  /** True once the sandbox cut the connection on purpose, so the requests log does not blame the client. */
  dropped = false;
  private sent = 0;

  constructor(
    private readonly res: ServerResponse,
    private readonly signal: AbortSignal,
    private readonly faults: ReplyFaults = {},
  ) {}

  /** False once the client left or the sandbox dropped the connection: stop producing. */
  get open(): boolean {
    return !this.dropped && !this.res.destroyed && !this.signal.aborted;
  }

  get headersSent(): boolean {
    return this.res.headersSent;
  }

  json(status: number, body: unknown, headers: OutgoingHttpHeaders = {}): void {
    this.send(status, JSON.stringify(body), { 'content-type': 'application/json', ...headers });
  }

  send(status: number, body: string | Buffer, headers: OutgoingHttpHeaders): void {
    if (!this.open) return;
    // a plain answer has no chunks to count: a drop rule drops it whole
    if (this.faults.dropAfterChunks !== undefined) return this.drop();
    const answer = this.faults.malformed ? malformedBody(body, headers) : { body, headers };
    this.res.writeHead(status, { ...this.withFaultHeaders(answer.headers), 'content-length': Buffer.byteLength(answer.body) });
    this.res.end(answer.body);
  }

  /** Sends a stream: the headers at once, so the client sees them before the first chunk, then each chunk. */
  async stream({ status = 200, headers, chunks, errorChunk }: StreamAnswer): Promise<void> {
    if (!this.startStream(status, headers)) return;
    const framing = headers['content-type'] === 'text/event-stream' ? 'sse' : 'lines';
    const iterator = chunks[Symbol.iterator]();
    // one chunk ahead, so the end marker is known as such before it is written
    for (let next = iterator.next(); !next.done; ) {
      const chunk = next.value;
      next = iterator.next();
      if (!(await this.streamChunk(chunk, { last: next.done === true, framing, errorChunk }))) return;
    }
    if (this.open) this.res.end();
  }

  /** Cuts the connection without an answer (a dropped request, or an error after the headers). */
  drop(): void {
    this.dropped = true;
    this.res.destroy();
  }

  /** Resets the connection (TCP RST): the client reads ECONNRESET, not a clean close. */
  reset(): void {
    this.dropped = true;
    const socket = this.res.socket;
    if (socket) socket.resetAndDestroy();
    else this.res.destroy();
  }

  private startStream(status: number, headers: OutgoingHttpHeaders): boolean {
    if (!this.open) return false;
    this.res.writeHead(status, this.withFaultHeaders(headers));
    this.res.flushHeaders();
    if (this.faults.dropAfterChunks === 0) return this.cut();
    return true;
  }

  /** Writes one chunk, or what a fault sends in its place; false once the stream is over for any reason. */
  private async streamChunk(chunk: string | Buffer, { last, framing, errorChunk }: ChunkPlace): Promise<boolean> {
    if (!(await this.pace())) return false;
    const { malformed, errorAfterChunks, dropAfterChunks } = this.faults;
    // a binary frame one byte short: its length prefix promises a byte that never comes
    if (malformed) return this.endWith(typeof chunk === 'string' ? malformedChunk(chunk, framing) : malformedFrame(chunk));
    // `last`: a faulted stream never sends its end marker, however short it is
    if (errorAfterChunks !== undefined && (this.sent >= errorAfterChunks || last)) return this.endWith(errorChunk(this.sent));
    if (dropAfterChunks !== undefined && last) return this.cut();
    return this.write(chunk);
  }

  /** Waits the fault's per-chunk delay; false when the client left meanwhile. */
  private async pace(): Promise<boolean> {
    const { chunkDelayMs } = this.faults;
    if (chunkDelayMs) {
      try {
        await delay(chunkDelayMs, undefined, { signal: this.signal });
      } catch {
        return false;
      }
    }
    return this.open;
  }

  private async write(chunk: string | Buffer): Promise<boolean> {
    this.sent += 1;
    if (this.sent === this.faults.dropAfterChunks) {
      this.res.write(chunk);
      return this.cut();
    }
    if (this.res.write(chunk)) return true;
    try {
      await once(this.res, 'drain', { signal: this.signal });
    } catch {
      return false;
    }
    return this.open;
  }

  /** The last chunk of a stream a fault ends early: a clean end of the HTTP body, without the end marker. */
  private endWith(chunk: string | Buffer): false {
    this.sent += 1;
    this.res.end(chunk);
    return false;
  }

  /** Breaks the stream after what was written: destroySoon, not destroy, so queued chunks reach the client first. */
  private cut(): false {
    this.dropped = true;
    const socket = this.res.socket;
    if (socket) socket.destroySoon();
    else this.res.destroy();
    return false;
  }

  /** The protocol's headers with the fault's added; a fault's header wins, so it can also replace one. */
  private withFaultHeaders(headers: OutgoingHttpHeaders): OutgoingHttpHeaders {
    const extra = this.faults.headers;
    if (!extra) return headers;
    const merged: OutgoingHttpHeaders = { ...headers };
    for (const [name, value] of Object.entries(extra)) merged[name.toLowerCase()] = value;
    return merged;
  }
}
