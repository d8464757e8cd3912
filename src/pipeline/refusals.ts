// An upstream's error answer, as the caller sees it (DESIGN §5): a refusal of the caller's own
// input is theirs to fix (400, with the upstream's reason, free); the upstream refusing the
// gateway's own credentials is the operator's problem (a 502 to the caller, an alert in the log).
import { type GatewayError, invalidRequest } from '../errors.js';
import { UpstreamHttpError } from '../upstreams/http.js';
import { SearchUpstreamError } from '../upstreams/volc-search/client.js';
import type { ResolvedModel } from './types.js';

const CALLER_FAULT = new Set([400, 404, 413, 422]);
const CREDENTIALS_REFUSED = new Set([401, 403]);
const REASON_LIMIT = 500;

export function refusalOf(
  error: unknown,
  model: ResolvedModel,
  log: { error(obj: object, msg?: string): void },
  metrics: { countUpstreamAuthFailure(channel: string): void },
): GatewayError | undefined {
  // The search upstream refuses input inside an HTTP 200, with its own parameter-error code.
  if (error instanceof SearchUpstreamError && error.refusedInput) return refusedWith(error.reason, `code ${error.code}`);
  if (!(error instanceof UpstreamHttpError)) return undefined;
  if (CALLER_FAULT.has(error.statusCode)) {
    return refusedWith(error.reason(), String(error.statusCode));
  }
  if (CREDENTIALS_REFUSED.has(error.statusCode)) {
    metrics.countUpstreamAuthFailure(model.upstream.name);
    log.error({ channel: model.upstream.name, model: model.id, status: error.statusCode }, 'OPERATOR ALERT: the upstream refused the channel credentials');
  }
  return undefined;
}

/** The upstream's reason when it gave one, else what it answered (a status, an error code). */
function refusedWith(reason: string | undefined, answered: string): GatewayError {
  return reason
    ? invalidRequest(`upstream refused the request: ${reason.slice(0, REASON_LIMIT)}`)
    : invalidRequest(`upstream refused the request (${answered})`);
}
