// The only place that writes the error body {"error", "type"}.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError, invalidRequest, MESSAGES, notFound, unavailable } from '../errors.js';
import { faultCode, type StoreHealth } from '../store/health.js';

interface SchemaError {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
}

/** `/messages/0/content` → `messages[0].content` */
function fieldPath(instancePath: string): string {
  return instancePath
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((path, part) => (/^\d+$/.test(part) ? `${path}[${part}]` : path ? `${path}.${part}` : part), '');
}

/** Turns the first schema violation into a message that names the field. */
export function describeSchemaError(errors: SchemaError[], dataVar: string): Error {
  const error = errors[0];
  if (!error) return invalidRequest(`invalid ${dataVar}`);
  const path = fieldPath(error.instancePath);
  if (error.keyword === 'required') {
    const field = path ? `${path}.${String(error.params.missingProperty)}` : String(error.params.missingProperty);
    return invalidRequest(field === 'model' ? MESSAGES.modelRequired : `${field} field is required`);
  }
  if (error.keyword === 'additionalProperties') {
    const field = path ? `${path}.${String(error.params.additionalProperty)}` : String(error.params.additionalProperty);
    return invalidRequest(`${field}: unknown field`);
  }
  // An empty model is no model: the spec's own message.
  if (path === 'model' && error.keyword === 'minLength') return invalidRequest(MESSAGES.modelRequired);
  const where = path || dataVar;
  const detail =
    error.keyword === 'enum' ? `must be one of ${(error.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`
    : error.keyword === 'type' ? `must be ${String(error.params.type).split(',').join(' or ')}`
    : error.message;
  return invalidRequest(`${where}: ${detail}`);
}

export function sendError(reply: FastifyReply, error: GatewayError) {
  // Every 429 says when to come back (DESIGN §5), so the SDKs' retries wait for it rather than guess.
  if (error.status === 429) reply.header('retry-after', String(error.retryAfterSeconds ?? 1));
  if (error.passThrough) {
    return reply.code(error.status).type(error.passThrough.contentType ?? 'application/json').send(error.passThrough.body);
  }
  return reply.code(error.status).type('application/json').send({ error: error.message, type: error.type });
}

function toGatewayError(error: FastifyError): GatewayError | undefined {
  if (error instanceof GatewayError) return error;
  if (error.validation) return describeSchemaError(error.validation as SchemaError[], error.validationContext ?? 'body') as GatewayError;
  const status = error.statusCode ?? 500;
  if (status >= 400 && status < 500) {
    // Fastify's own refusals (bad JSON, too large, wrong media type) keep their status, in our shape.
    const messages: Record<string, string> = {
      FST_ERR_CTP_INVALID_JSON_BODY: `invalid JSON body: ${error.message}`,
      FST_ERR_CTP_EMPTY_JSON_BODY: 'request body is empty; expected JSON',
      FST_ERR_CTP_BODY_TOO_LARGE: 'request body is too large',
      FST_ERR_CTP_INVALID_MEDIA_TYPE: `unsupported content type: ${error.message}`,
    };
    const message = (error.code && messages[error.code]) ?? (error.name === 'SyntaxError' ? `invalid JSON body: ${error.message}` : error.message);
    return new GatewayError(status, 'invalid_request_error', message);
  }
  return undefined;
}

export function registerErrorHandlers(app: FastifyInstance, health: StoreHealth) {
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    // A store that refuses writes (full disk, lost connection) is a 503, its real cause in the log.
    if (health.failed(error)) {
      request.log.error({ err: error, code: faultCode(error) }, 'the store refused a write');
      return sendError(reply, unavailable('the gateway cannot record charges right now; retry shortly'));
    }
    const known = toGatewayError(error);
    if (known) {
      if (known.status >= 500) request.log.warn({ err: known.cause ?? known }, known.message);
      return sendError(reply, known);
    }
    // Anything else is our own fault: logged whole, answered without its text.
    request.log.error({ err: error }, 'unhandled error');
    return reply.code(500).send({ error: 'internal gateway error', type: 'server_error' });
  });
  app.setNotFoundHandler((request, reply) => sendError(reply, notFound(`no route for ${request.method} ${request.url.split('?')[0]}`)));
}
