import type { IncomingHttpHeaders } from 'node:http';
import { openAiError } from './openai-common.js';

/** One upstream request as the sandbox received it, so a test can check what the gateway sent. */
export interface LoggedRequest {
  /** The upstream kind of the route it reached; null when no route serves that path. */
  readonly kind: string | null;
  readonly method: string;
  /** As received, query string included. */
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  /** Parsed JSON; the text for other bodies; null when empty. */
  readonly body: unknown;
  /** The client closed the connection before the answer finished (a hang, a cancelled stream). */
  aborted: boolean;
}

export const DEFAULT_LOG_LIMIT = 1000;

export class RequestsLog {
  private entries: LoggedRequest[] = [];

  constructor(private limit = DEFAULT_LOG_LIMIT) {}

  /** Stores the request and returns the live entry, whose `aborted` flag is set later. */
  record(entry: Omit<LoggedRequest, 'aborted'>): LoggedRequest {
    const stored: LoggedRequest = { ...entry, aborted: false };
    this.entries.push(stored);
    if (this.entries.length > this.limit) this.entries.splice(0, this.entries.length - this.limit);
    return stored;
  }

  /** Oldest first, newest last. */
  list(): readonly LoggedRequest[] {
    return this.entries;
  }

  /** Forgets every request and keeps none from now on (the control API was turned off). */
  stopKeeping(): void {
    this.limit = 0;
    this.clear();
  }

  clear(): number {
    const count = this.entries.length;
    this.entries = [];
    return count;
  }
}

/** `/__sandbox/requests`: GET lists (newest last), DELETE clears. */
export function answerRequestsControl(log: RequestsLog, method: string): { status: number; body: unknown } {
  if (method === 'GET') return { status: 200, body: { data: log.list() } };
  if (method === 'DELETE') return { status: 200, body: { deleted: log.clear() } };
  return {
    status: 405,
    body: openAiError(`${method} /__sandbox/requests: use GET or DELETE`, 'invalid_request_error'),
  };
}
