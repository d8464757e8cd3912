// How JSON request bodies are read: an empty body is no body (routes that need one say so through
// their schema), nesting is bounded before anything walks the value, and prototype pollution is
// refused, as Fastify's own parser does; so is a NUL character in a string (nul-guard.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import secureJson from 'secure-json-parse';
import { invalidRequest } from '../errors.js';
import { OPEN_BRACE, OPEN_BRACKET, walkNesting } from '../json-text.js';
import { requireNoNulInJson } from './nul-guard.js';

/** Deeper than any real request; deep enough nesting would overflow whatever walks the value. */
export const MAX_JSON_DEPTH = 64;

/** The deepest nesting of arrays and objects in JSON text, strings skipped (one linear pass). */
export function jsonDepth(text: string): number {
  let deepest = 0;
  walkNesting(text, 0, text.length, 0, (depth) => {
    if (depth > deepest) deepest = depth;
    return true;
  });
  return deepest;
}

/**
 * Whether `text` holds more than `depth` opening brackets and braces, strings included: a bound on
 * its nesting that a tight loop finds, so that only text that may nest that deep is walked.
 */
export function mayNestDeeperThan(text: string, depth: number): boolean {
  let openers = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if ((code === OPEN_BRACKET || code === OPEN_BRACE) && ++openers > depth) return true;
  }
  return false;
}

export function parseJsonBody(text: string): unknown {
  if (text.trim() === '') return undefined;
  if (mayNestDeeperThan(text, MAX_JSON_DEPTH) && jsonDepth(text) > MAX_JSON_DEPTH)
    throw invalidRequest(`invalid JSON body: nested deeper than ${MAX_JSON_DEPTH} levels`);
  let value: unknown;
  try {
    value = secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
  } catch (error) {
    throw invalidRequest(`invalid JSON body: ${(error as Error).message}`);
  }
  requireNoNulInJson(text, value);
  return value;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** JSON text is UTF-8 (RFC 8259 §8.1): other bytes are refused, not turned into U+FFFD and billed as sent. */
function decodeUtf8(body: string | Buffer): string {
  if (typeof body === 'string') return body;
  try {
    return utf8.decode(body);
  } catch {
    throw invalidRequest('invalid JSON body: not valid UTF-8');
  }
}

export function registerJsonBodies(app: FastifyInstance) {
  // No route reads text/plain: with Fastify's own parser it reached the schema as a string
  // ("body: must be object"); without it, it gets the 400 naming the content type to send.
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body: string | Buffer, done) => {
    try {
      done(null, parseJsonBody(decodeUtf8(body)));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
}

/** RFC 2046 §5.1.1: 1 to 70 characters. The parser throws past 256, which was a 500. */
const MAX_BOUNDARY_LENGTH = 70;

/**
 * A multipart body without a usable boundary cannot be read at all: say so, before a parser fails on
 * it. A callback hook (it never waits): no promise per request.
 */
export function requireMultipartBoundary(request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction) {
  done(multipartBoundaryProblem(request.headers['content-type'] ?? ''));
}

function multipartBoundaryProblem(type: string): Error | undefined {
  if (!/^multipart\//i.test(type)) return undefined;
  const param = /;\s*boundary=(?:"([^"]*)"|([^;]*))/i.exec(type);
  const boundary = (param?.[1] ?? param?.[2] ?? '').trim();
  if (boundary === '') {
    return invalidRequest('Content-Type: multipart/form-data needs a boundary parameter (multipart/form-data; boundary=…)');
  }
  if (boundary.length > MAX_BOUNDARY_LENGTH) {
    return invalidRequest(`Content-Type: the multipart boundary is at most ${MAX_BOUNDARY_LENGTH} characters, got ${boundary.length}`);
  }
  return undefined;
}
