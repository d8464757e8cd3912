// PostgreSQL refuses the NUL character (U+0000) in text, so a NUL that reached the store from a
// request was a 500. It is refused at the edge on every store, a 400 naming the field: in the
// path's ids and the query string (onRequest, before any body is read) and in JSON bodies (the
// parser, json-body.ts), and in an upload's filename. Requests without one pay a substring search each.
import type { FastifyRequest } from 'fastify';
import { invalidRequest } from '../errors.js';

const refusal = (field: string) => invalidRequest(`${field}: must not contain the NUL character (\\u0000)`);

/** A string the request carries outside JSON and the URL (an upload's filename). */
export function requireNoNul(field: string, value: string | undefined): void {
  if (value?.includes('\0')) throw refusal(field);
}

/** The path of the first string (or object key) in `value` holding a NUL, else undefined. */
export function nulPath(value: unknown, at = ''): string | undefined {
  if (typeof value === 'string') return value.includes('\0') ? at || 'body' : undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = nulPath(value[i], `${at}[${i}]`);
      if (found) return found;
    }
    return undefined;
  }
  if (value === null || typeof value !== 'object') return undefined;
  for (const [key, item] of Object.entries(value)) {
    const path = at ? `${at}.${key}` : key;
    if (key.includes('\0')) return path;
    const found = nulPath(item, path);
    if (found) return found;
  }
  return undefined;
}

/** A parsed JSON body: refused when its text escapes a NUL (`\u0000`) that the value holds. */
export function requireNoNulInJson(text: string, parsed: unknown): void {
  if (!text.includes('\\u0000')) return; // a raw NUL byte is no valid JSON: the parser refused it
  const field = nulPath(parsed);
  if (field) throw refusal(field);
}

/** For onRequest: a percent-encoded NUL in the path or the query string, named by its parameter. */
export function nulInUrl(request: FastifyRequest): Error | undefined {
  if (!request.url.includes('%00')) return undefined;
  return refusal(nulPath(request.params ?? {}) ?? nulPath(request.query ?? {}) ?? 'the URL');
}
