// The only place that writes the error body {"error", "type"}.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError, invalidRequest, MESSAGES, notFound, unavailable } from '../errors.js';
import { faultCode, type StoreHealth } from '../store/health.js';
import { PATTERN_MEANINGS } from './schemas/query.js';

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

/**
 * A field of several forms (anyOf) that matched none: name every form ("must be string or array"),
 * unless one form matched the outline and failed inside it, which is then the error to report.
 */
function describeUnion(errors: SchemaError[], dataVar: string): Error | undefined {
  const union = errors.find((e) => e.keyword === 'anyOf');
  if (!union) return undefined;
  const inside = errors.find((e) => e !== union && e.instancePath.startsWith(`${union.instancePath}/`));
  if (inside) return describeSchemaError([inside], dataVar);
  const forms = errors.filter((e) => e.keyword === 'type' && e.instancePath === union.instancePath).map((e) => String(e.params.type));
  if (forms.length === 0) return undefined;
  return invalidRequest(`${fieldPath(union.instancePath) || dataVar}: must be ${forms.join(' or ')}`);
}

/** Turns the first schema violation into a message that names the field. */
export function describeSchemaError(errors: SchemaError[], dataVar: string): Error {
  const union = describeUnion(errors, dataVar);
  if (union) return union;
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
    error.keyword === 'enum'
      ? `must be one of ${(error.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`
      : error.keyword === 'type'
        ? `must be ${String(error.params.type).split(',').join(' or ')}`
        : (error.keyword === 'pattern' && PATTERN_MEANINGS[String(error.params.pattern)]) || error.message;
  return invalidRequest(`${where}: ${detail}`);
}

export function sendError(reply: FastifyReply, error: GatewayError) {
  // Every 429 says when to come back (DESIGN §5), so the SDKs' retries wait for it rather than guess.
  if (error.retryAfterSeconds !== undefined || error.status === 429) reply.header('retry-after', String(error.retryAfterSeconds ?? 1));
  if (error.passThrough) {
    return reply
      .code(error.status)
      .type(error.passThrough.contentType ?? 'application/json')
      .send(error.passThrough.body);
  }
  return reply.code(error.status).type('application/json').send({ error: error.message, type: error.type });
}

// What the multipart parser (busboy's Dicer) raises when the body ends before its closing
// boundary: the caller's bytes are at fault, whichever route was reading them. Plain Errors with
// no code, so known by their text.
const MULTIPART_CUT_SHORT = /^(?:\w+ terminated early due to unexpected end of multipart data|Unexpected end of multipart data)$/;

function toGatewayError(error: FastifyError): GatewayError | undefined {
  if (error instanceof GatewayError) return error;
  if (MULTIPART_CUT_SHORT.test(error.message) && error.statusCode === undefined) {
    return invalidRequest('multipart body ends before its closing boundary (--boundary--); send the whole multipart/form-data body');
  }
  if (error.validation) return describeSchemaError(error.validation as SchemaError[], error.validationContext ?? 'body') as GatewayError;
  const status = error.statusCode ?? 500;
  if (status >= 400 && status < 500) {
    // Fastify's own refusals (bad JSON, too large, wrong media type) keep their status, in our shape.
    const messages: Record<string, string> = {
      FST_ERR_CTP_INVALID_JSON_BODY: `invalid JSON body: ${error.message}`,
      FST_ERR_CTP_EMPTY_JSON_BODY: 'request body is empty; expected JSON',
      FST_ERR_CTP_BODY_TOO_LARGE: 'request body is too large',
      FST_ERR_CTP_INVALID_MEDIA_TYPE: 'Content-Type: send application/json (or multipart/form-data where a file is uploaded)',
    };
    const message = (error.code && messages[error.code]) ?? (error.name === 'SyntaxError' ? `invalid JSON body: ${error.message}` : error.message);
    // 415 is not a status the spec lists: a body of the wrong type is a bad request like any other.
    return new GatewayError(status === 415 ? 400 : status, 'invalid_request_error', message);
  }
  return undefined;
}

const CLIENT_ERRORS: Record<string, { status: number; reason: string; message: string }> = {
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, reason: 'Request Timeout', message: 'the request was not received in time' },
  HPE_HEADER_OVERFLOW: { status: 431, reason: 'Request Header Fields Too Large', message: 'request headers are too large' },
};

/**
 * Errors Node raises before a request exists (a request that trickled past its timeout, headers too
 * large, bytes that are not HTTP): answered in the error shape, then the connection is closed.
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: import('node:stream').Duplex): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const known = (error.code ? CLIENT_ERRORS[error.code] : undefined) ?? { status: 400, reason: 'Bad Request', message: 'the request is not valid HTTP' };
  const body = JSON.stringify({ error: known.message, type: 'invalid_request_error' });
  // Destroying the socket at once, with the caller's bytes still unread, resets the connection,
  // and a reset can discard our answer before the caller reads it. So end gracefully (answer,
  // then FIN) and destroy when the caller closes its side, or after a short grace.
  const destroy = () => socket.destroy(error);
  socket.once('end', destroy);
  setTimeout(destroy, 1_000).unref();
  if (socket.writable) {
    socket.end(
      `HTTP/1.1 ${known.status} ${known.reason}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n${body}`,
    );
  } else destroy();
}

export function registerErrorHandlers(app: FastifyInstance, health: StoreHealth) {
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    // The caller's own connection failing under its body (reset or closed mid-upload: ECONNRESET
    // 'aborted') is the caller's doing.
    if (error === request.raw.errored) {
      request.log.info({ err: error }, 'the caller left before its request body was received');
      return sendError(reply, invalidRequest('the request body was cut off before it was received whole'));
    }
    // A store that refuses writes (full disk, lost connection) is a 503, its real cause in the log.
    if (health.failed(error)) {
      request.log.error({ err: error, code: faultCode(error) }, 'the store refused a write');
      return sendError(reply, unavailable('the gateway cannot record charges right now; retry shortly'));
    }
    const known = toGatewayError(error);
    if (known) {
      if (known.status >= 500 && !known.logged) request.log.warn({ err: known.cause ?? known }, known.message);
      return sendError(reply, known);
    }
    // Anything else is our own fault: logged whole, answered without its text.
    request.log.error({ err: error }, 'unhandled error');
    return reply.code(500).send({ error: 'internal gateway error', type: 'server_error' });
  });
  app.setNotFoundHandler((request, reply) => sendError(reply, notFound(`no route for ${request.method} ${request.url.split('?')[0]}`)));
}
