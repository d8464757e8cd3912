// The OpenAPI document of a live gateway, its operations listed, and a JSON Schema validator for
// the schemas it carries (OpenAPI 3.1 schemas are JSON Schema 2020-12; ajv comes with Fastify).
import assert from 'node:assert/strict';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { request } from 'undici';

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

export interface DocumentedOperation {
  path: string;
  method: string;
  /** `POST /v1/chat/completions` */
  key: string;
  operation: any;
}

export async function fetchDocument(baseUrl: string): Promise<any> {
  const res = await request(`${baseUrl}/openapi.json`);
  assert.equal(res.statusCode, 200);
  return res.body.json();
}

export function operationsOf(doc: any): DocumentedOperation[] {
  return Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => HTTP_METHODS.includes(method))
      .map(([method, operation]) => ({ path, method, key: `${method.toUpperCase()} ${path}`, operation })),
  );
}

/**
 * A validator of the document's schemas, its components reachable as `#/components/schemas/…`.
 * Formats: date-time is checked; binary (a multipart file) is any string.
 */
export function schemaValidator(doc: any): (schema: object, value: unknown) => string | undefined {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addFormat('date-time', (text: string) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(text) && !Number.isNaN(Date.parse(text)));
  ajv.addFormat('binary', true);
  ajv.addSchema({ components: doc.components ?? {} }, 'document');
  return (schema, value) => {
    // Refs to components resolve against the document added above.
    const rebased = JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"document#/components/'));
    const validate = ajv.compile(rebased);
    return validate(value) ? undefined : ajv.errorsText(validate.errors);
  };
}
