// An upstream's error answer, as the caller sees it (DESIGN §5): a refusal of the caller's own
// input is theirs to fix (400, with the upstream's reason, free); the upstream refusing the
// gateway's own credentials is the operator's problem (a 502 to the caller, an alert in the log).
import { type GatewayError, invalidRequest } from '../errors.js';
import { UpstreamHttpError } from '../upstreams/http.js';
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
  if (!(error instanceof UpstreamHttpError)) return undefined;
  if (CALLER_FAULT.has(error.statusCode)) {
    const reason = error.reason()?.slice(0, REASON_LIMIT);
    return invalidRequest(reason ? `upstream refused the request: ${reason}` : `upstream refused the request (${error.statusCode})`);
  }
  if (CREDENTIALS_REFUSED.has(error.statusCode)) {
    metrics.countUpstreamAuthFailure(model.upstream.name);
    log.error({ channel: model.upstream.name, model: model.id, status: error.statusCode }, 'OPERATOR ALERT: the upstream refused the channel credentials');
  }
  return undefined;
}
