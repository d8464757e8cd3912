import { once } from 'node:events';
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';

export interface ReplyFaults {
  /** Destroy the socket after this many streamed chunks; a plain answer is dropped unsent. */
  readonly dropAfterChunks?: number | undefined;
  /** Wait this long before each streamed chunk. */
  readonly chunkDelayMs?: number | undefined;
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

/**
 * The answer side of one request. Handlers write through it so that the fault rule's stream behaviours
 * (drop, per-chunk delay) apply to every protocol alike, and so backpressure is honoured in one place.
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
    if (this.faults.dropAfterChunks !== undefined) return this.drop();
    this.res.writeHead(status, { ...headers, 'content-length': Buffer.byteLength(body) });
    this.res.end(body);
  }

  /** Sends the headers of a streamed answer now, so the client sees them before the first chunk. */
  startStream(status = 200, headers: OutgoingHttpHeaders = SSE_HEADERS): void {
    if (!this.open) return;
    this.res.writeHead(status, headers);
    this.res.flushHeaders();
    if (this.faults.dropAfterChunks === 0) {
      this.dropped = true;
      // destroySoon, not destroy: the headers just queued must reach the client before the cut
      this.res.socket?.destroySoon();
    }
  }

  /** Writes one chunk; resolves false when the handler should stop (client gone, or dropped by a fault). */
  async write(chunk: string | Buffer): Promise<boolean> {
    if (!this.open) return false;
    const { chunkDelayMs, dropAfterChunks } = this.faults;
    if (chunkDelayMs) {
      try {
        await delay(chunkDelayMs, undefined, { signal: this.signal });
      } catch {
        return false;
      }
      if (!this.open) return false;
    }
    this.sent += 1;
    if (this.sent === dropAfterChunks) {
      this.dropped = true;
      // destroy in the callback: destroying now would discard the chunk still queued on the socket
      this.res.write(chunk, () => this.res.destroy());
      return false;
    }
    if (this.res.write(chunk)) return true;
    try {
      await once(this.res, 'drain', { signal: this.signal });
    } catch {
      return false;
    }
    return this.open;
  }

  end(): void {
    if (this.open) this.res.end();
  }

  /** Cuts the connection without an answer (a dropped request, or an error after the headers). */
  drop(): void {
    this.dropped = true;
    this.res.destroy();
  }
}
