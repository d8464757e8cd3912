// What the document says of every operation that the routes' schemas do not: its operationId, the
// example of its body and of the parameters it needs, and the headers every answer carries.
// Applied to the whole document once it is generated (@fastify/swagger's transformObject).
import { BODY_EXAMPLES, PARAMETER_EXAMPLES } from './examples.js';
import { OPERATION_IDS } from './operation-ids.js';

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** Set on every answer by the server's first hook (src/http/server.ts), errors and 404s included. */
const REQUEST_ID_HEADER = {
  'x-request-id': {
    description:
      'The gateway’s id of this request (req_…), in its log lines and usage rows. A well-formed x-request-id the caller sent is kept beside it and echoed as x-client-request-id.',
    schema: { type: 'string', pattern: '^req_' },
  },
};

/** Every 429 carries it (src/http/errors.ts), whichever limit answered. */
const RETRY_AFTER_HEADER = {
  'retry-after': { description: 'Whole seconds until the key, or the address, may call again.', schema: { type: 'integer', minimum: 1 } },
};

interface Operation {
  operationId?: string;
  parameters?: { in: string; name: string; example?: unknown }[];
  requestBody?: { content: Record<string, { example?: unknown }> };
  responses?: Record<string, { headers?: Record<string, unknown> }>;
}

function finishOperation(key: string, operation: Operation): void {
  const operationId = OPERATION_IDS[key];
  if (operationId) operation.operationId = operationId;
  const example = BODY_EXAMPLES[key];
  if (operation.requestBody && example !== undefined) {
    for (const media of Object.values(operation.requestBody.content)) media.example = example;
  }
  const parameterExamples = PARAMETER_EXAMPLES[key] ?? {};
  for (const parameter of operation.parameters ?? []) {
    if (parameterExamples[parameter.name] !== undefined) parameter.example = parameterExamples[parameter.name];
  }
  for (const [status, response] of Object.entries(operation.responses ?? {})) {
    response.headers = { ...REQUEST_ID_HEADER, ...(status === '429' && RETRY_AFTER_HEADER), ...response.headers };
  }
}

export function finishDocument<T extends object>(document: T): T {
  const { paths = {} } = document as { paths?: Record<string, Record<string, unknown>> };
  for (const [path, item] of Object.entries(paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (HTTP_METHODS.includes(method)) finishOperation(`${method.toUpperCase()} ${path}`, operation as Operation);
    }
  }
  return document;
}
