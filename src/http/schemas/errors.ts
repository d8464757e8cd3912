// The error body every failure is answered with (http/errors.ts writes it), as a response schema.

const ErrorBody = {
  type: 'object',
  required: ['error', 'type'],
  properties: {
    error: { type: 'string', description: 'What went wrong; a 400 names the field at fault.' },
    type: {
      type: 'string',
      enum: ['invalid_request_error', 'auth_error', 'billing_error', 'not_found_error', 'rate_limit_error', 'server_error'],
      description: 'The kind of error, one per status.',
    },
  },
} as const;

const WHEN = {
  400: 'A field of the request is invalid; the message names it.',
  401: 'No API key, or one that is unknown or revoked.',
  402: 'The balance (with the account’s overdraft) does not cover what the call may cost; nothing was charged.',
  403: 'A request made with the console’s session cookie from another site’s page.',
  404: 'No such object in this account (another account’s is answered the same).',
  409: 'A request with this Idempotency-Key is still running.',
  413: 'The upload is larger than a limit, or than the account’s file storage has room for; the message says which.',
  422: 'This Idempotency-Key was used before with a different request.',
  429: 'The key is past its requests per minute; Retry-After says when to come back.',
  502: 'The upstream provider failed; nothing was charged (a stream that already started ends with its protocol’s error event).',
  503: 'The gateway is shutting down, or its store cannot be used right now.',
} as const;

/** Response schemas of the error answers a route can give, each described. */
export function errorResponses(...statuses: (keyof typeof WHEN)[]) {
  return Object.fromEntries(statuses.map((status) => [status, { ...ErrorBody, description: WHEN[status] }]));
}

/** One error answer with a description of its own (the admin token's 401, say). */
export const errorResponse = (status: number, description: string) => ({ [status]: { ...ErrorBody, description } });

/** What a metered call can answer besides its result. */
export const METERED_ERRORS = errorResponses(400, 401, 402, 409, 422, 429, 502, 503);

/** What a read of one object of the account (a task, a file) can answer besides it. */
export const LOOKUP_ERRORS = errorResponses(401, 404, 429, 503);
