// The one place an HTTP status meets an error type. Only src/http/errors.ts writes the body.

export type ErrorType = 'invalid_request_error' | 'auth_error' | 'billing_error' | 'not_found_error' | 'rate_limit_error' | 'server_error';

export class GatewayError extends Error {
  /** An upstream's own error answer, sent to the caller as it came (the responses API's refusals). */
  passThrough?: { body: string; contentType: string | undefined };
  /** Its cause was already logged where it happened (with the model and channel): log it once. */
  logged = false;
  /** Retry-After (a 429's, a 503's, a 502 for no channel available), in whole seconds until the caller may try again. */
  retryAfterSeconds?: number;
  /** A 402 for a hold the balance did not cover: what the hold needed and what the account had. */
  funds?: { neededMicros: number; availableMicros: number };

  constructor(
    readonly status: number,
    readonly type: ErrorType,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'GatewayError';
  }
}

export const MESSAGES = {
  modelRequired: 'model field is required',
  auth: 'invalid or missing API key',
  billing: 'insufficient balance -- please top up or upgrade the service plan',
  rateLimited: 'rate limit exceeded',
  upstream: 'upstream provider error',
} as const;

export const invalidRequest = (message: string) => new GatewayError(400, 'invalid_request_error', message);
export const auth = (message: string = MESSAGES.auth) => new GatewayError(401, 'auth_error', message);
export const billing = (message: string = MESSAGES.billing) => new GatewayError(402, 'billing_error', message);
/**
 * A hold the account's balance does not cover: the spec's message, then what the call needed to hold
 * and what the account has, so the caller knows how much to add (`atLeast`: the call could have
 * been made smaller, down to this).
 */
export function insufficientBalance({ neededMicros, availableMicros, atLeast = false }: { neededMicros: number; availableMicros: number; atLeast?: boolean }) {
  const needs = `${atLeast ? 'at least ' : ''}${neededMicros} micros`;
  const error = billing(`${MESSAGES.billing}: this call needs to hold ${needs}; the account has ${availableMicros} micros available`);
  error.funds = { neededMicros, availableMicros };
  return error;
}
/** Refused whoever the caller is (a cross-site request with the console's cookie); typed like 409 and 422. */
export const forbidden = (message: string) => new GatewayError(403, 'invalid_request_error', message);
export const notFound = (message: string) => new GatewayError(404, 'not_found_error', message);
/** The caller did not send its request (its body) in time; typed as Node's own 408 is answered. */
export const requestTimeout = (message: string) => new GatewayError(408, 'invalid_request_error', message);
export const conflict = (message: string) => new GatewayError(409, 'invalid_request_error', message);
export const unprocessable = (message: string) => new GatewayError(422, 'invalid_request_error', message);
/** `retryAfterMs`: how long until the caller may call again; rounded up to whole seconds, at least 1. */
export function rateLimited({ retryAfterMs = 1_000, message = MESSAGES.rateLimited }: { retryAfterMs?: number; message?: string } = {}): GatewayError {
  const error = new GatewayError(429, 'rate_limit_error', message);
  error.retryAfterSeconds = Math.max(1, Math.ceil(retryAfterMs / 1_000));
  return error;
}
export const upstream = (cause?: unknown) => new GatewayError(502, 'server_error', MESSAGES.upstream, { cause });
/** Every channel of the model is out (open circuits, rested keys, disabled): an upstream failure, with when to retry. */
export function noChannelAvailable(model: string, retryAfterMs: number): GatewayError {
  const error = new GatewayError(502, 'server_error', `${MESSAGES.upstream}: no channel of model ${model} is available now; retry after Retry-After`);
  error.retryAfterSeconds = Math.max(1, Math.ceil(retryAfterMs / 1_000));
  return error;
}
/** The upstream's refusal, relayed with its status and body. */
export function upstreamPassThrough(status: number, body: string, contentType: string | undefined): GatewayError {
  const error = new GatewayError(status, status === 404 ? 'not_found_error' : 'invalid_request_error', `upstream answered ${status}`);
  error.passThrough = { body, contentType };
  return error;
}

/** The caller left before the answer, billed only for what was made by then (never replayed as "nothing happened"). */
export const clientClosed = () => new GatewayError(499, 'invalid_request_error', 'the client closed the request before the answer');

export function unavailable(message = 'the gateway is shutting down', retryAfterMs?: number): GatewayError {
  const error = new GatewayError(503, 'server_error', message);
  if (retryAfterMs !== undefined) error.retryAfterSeconds = Math.max(1, Math.ceil(retryAfterMs / 1_000));
  return error;
}
