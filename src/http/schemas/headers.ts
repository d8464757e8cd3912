// Request headers the handlers read themselves, for the document only (FastifySchema.docsOnly):
// a Fastify headers schema would validate them, and their checks have their own messages.

/** The headers of an operation, as a schema of the request's header fields. */
export const headers = (properties: Record<string, object>) => ({ type: 'object', properties }) as const;

export const IdempotencyKeyHeader = {
  'idempotency-key': {
    type: 'string',
    minLength: 1,
    maxLength: 255,
    description:
      'The same key within 24 hours replays the first answer and never charges twice (422 if reused with another body, 409 while the first runs). Refused (400) on a streamed call.',
  },
} as const;
