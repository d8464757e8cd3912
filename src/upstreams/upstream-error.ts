// What an upstream's error answer becomes: its status, its (size-limited) body, and what it asked of
// the caller. Shared by the answer handlers of http.ts and streamed-answer.ts.

/** How much of an error answer's body is kept; the rest is read and dropped. */
export const ERROR_BODY_LIMIT = 64 * 1024;
// What a log line shows of an error body: enough to diagnose, too little to copy a prompt out of.
const LOGGED_BODY_LIMIT = 300;

/** An upstream answered with a non-2xx status. `body` is its (size-limited) text. */
export class UpstreamHttpError extends Error {
  override name = 'UpstreamHttpError';
  declare readonly body: string;
  /** The start of the body, the only part a log line carries (`body` is kept off the logs). */
  readonly bodyExcerpt: string;
  /** How long the upstream asked to be left alone (its Retry-After), when it said. */
  readonly retryAfterMs: number | undefined;
  constructor(
    readonly statusCode: number,
    body: string,
    readonly contentType: string | undefined,
    retryAfter?: string,
  ) {
    super(`upstream answered ${statusCode}`);
    this.retryAfterMs = retryAfterMsOf(retryAfter);
    // Not enumerable: log serializers copy enumerable fields, and an error body may quote a prompt.
    Object.defineProperty(this, 'body', { value: body, enumerable: false });
    this.bodyExcerpt = body.length > LOGGED_BODY_LIMIT ? `${body.slice(0, LOGGED_BODY_LIMIT)}…` : body;
  }

  /** The upstream's own reason, from the error shapes upstreams use ({error: {message}}, {error}, {message}). */
  reason(): string | undefined {
    try {
      const parsed = JSON.parse(this.body) as { error?: { message?: unknown } | string; message?: unknown };
      const message = typeof parsed.error === 'string' ? parsed.error : (parsed.error?.message ?? parsed.message);
      return typeof message === 'string' && message !== '' ? message : undefined;
    } catch {
      return undefined; // not JSON: the status says enough
    }
  }
}

/** Retry-After as seconds or an HTTP date, in ms from now; undefined when absent or unreadable. */
export function retryAfterMsOf(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return seconds >= 0 ? seconds * 1000 : undefined;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

export function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** A header's first value, from undici's raw [name, value, …] list. */
export function rawHeader(rawHeaders: Buffer[], name: string): string | undefined {
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (rawHeaders[i]!.toString('latin1').toLowerCase() === name) return rawHeaders[i + 1]!.toString('latin1');
  }
  return undefined;
}

/** An error answer's kept body (its first ERROR_BODY_LIMIT bytes) as UpstreamHttpError. */
export function errorOfAnswer(statusCode: number, rawHeaders: Buffer[], body: Buffer): UpstreamHttpError {
  const text = body.subarray(0, ERROR_BODY_LIMIT).toString('utf8');
  return new UpstreamHttpError(statusCode, text, rawHeader(rawHeaders, 'content-type'), rawHeader(rawHeaders, 'retry-after'));
}
