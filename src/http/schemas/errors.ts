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
  408: 'The request body was not received whole in time (`limits.body_timeout_ms` for a JSON body, `limits.receive_timeout_ms` for an upload); nothing was charged and nothing of an upload is kept.',
  409: 'A request with this Idempotency-Key is still running.',
  413: 'The request body or upload is larger than its limit, or than the account’s file storage has room for; the message says which.',
  422: 'This Idempotency-Key was used before with a different request.',
  429: 'The key is past its requests per minute; Retry-After says when to come back.',
  500: 'An unexpected error of the gateway’s own; nothing was charged.',
  502:
    'The upstream provider failed, or refused the gateway’s own credentials; nothing was charged (a stream that already started ends with its protocol’s error event). ' +
    'Also when every channel of the model is out for now (open circuits, rate-limited keys, disabled by the operator): then Retry-After says when one may take a call.',
  503: 'The gateway is shutting down, or its store cannot be used right now.',
} as const;

const retryAfter = (description: string) => ({ 'retry-after': { type: 'integer', minimum: 1, description } });

/** Response headers documented with an error answer. */
const HEADERS: Partial<Record<keyof typeof WHEN, object>> = {
  429: retryAfter('Whole seconds until the key, or the address, may call again.'),
  502: retryAfter('With no channel of the model available: whole seconds until the soonest may take a call.'),
};

/** Response schemas of the error answers a route can give, each described. */
export function errorResponses(...statuses: (keyof typeof WHEN)[]) {
  return Object.fromEntries(
    statuses.map((status) => [status, { ...ErrorBody, description: WHEN[status], ...(HEADERS[status] && { headers: HEADERS[status] }) }]),
  );
}

/** One error answer with a description of its own (the admin token's 401, say). */
export const errorResponse = (status: number, description: string) => ({ [status]: { ...ErrorBody, description } });

/** What every metered call can answer besides its result, Idempotency-Key aside. */
const CALL_ERRORS = {
  ...errorResponses(400, 401, 402),
  ...errorResponse(
    403,
    'The API key may not use this model (its `models` limit; the message lists the models it may use), or its account is suspended by the operator. Nothing was charged.',
  ),
  ...errorResponses(408, 413, 429, 500, 502, 503),
};

/** What a metered call that takes Idempotency-Key (every one that can answer in one piece) can answer besides its result. */
export const METERED_ERRORS = { ...CALL_ERRORS, ...errorResponses(409, 422) };

/** What an always-streamed metered call (speech) can answer: it refuses Idempotency-Key with a 400. */
export const STREAMED_METERED_ERRORS = CALL_ERRORS;

/** What an upload adds: a body that does not arrive whole in time. */
export const UPLOAD_ERRORS = errorResponses(408);

/** What a read of one object of the account (a task, a file) can answer besides it. */
export const LOOKUP_ERRORS = errorResponses(401, 404, 429, 503);
