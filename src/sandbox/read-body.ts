import type { IncomingMessage } from 'node:http';

export const DEFAULT_MAX_BODY_BYTES = 32 * 1024 * 1024;

export class BodyTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`request body larger than ${limit} bytes`);
    this.name = 'BodyTooLargeError';
  }
}

export interface ReadBody {
  readonly raw: Buffer;
  /** Parsed JSON; undefined when the body is empty or its content type is not JSON. */
  readonly json: unknown;
  /** Set when the body claimed to be JSON and did not parse. */
  readonly jsonError?: string;
}

/** Reads the whole body (refusing more than `limit` bytes) and parses it when it is JSON. */
export async function readBody(req: IncomingMessage, limit: number): Promise<ReadBody> {
  const declared = Number(req.headers['content-length']);
  // refuse up front when the client announced too much, rather than reading it first
  if (declared > limit) throw new BodyTooLargeError(limit);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new BodyTooLargeError(limit);
    chunks.push(chunk);
  }
  const raw = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
  if (raw.length === 0 || !claimsJson(req.headers['content-type'] ?? '')) return { raw, json: undefined };
  try {
    return { raw, json: JSON.parse(raw.toString('utf8')) };
  } catch (error) {
    return { raw, json: undefined, jsonError: `invalid JSON body: ${(error as Error).message}` };
  }
}

/** text/plain too: it is what fetch sends for a string body, and real upstreams parse such bodies as JSON. */
function claimsJson(contentType: string): boolean {
  return contentType === '' || contentType.includes('json') || contentType.startsWith('text/plain');
}
