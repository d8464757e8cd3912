// Response schemas that document an answer without rewriting it.
import type { RouteShorthandOptions } from 'fastify';

/**
 * Route options for an answer whose response schema documents it without serializing it: the
 * answer is written with JSON.stringify, exactly as built. A response schema otherwise makes
 * Fastify serialize with fast-json-stringify, which drops every property the schema does not
 * name; an upstream's answer (or a task's result, or an Idempotency-Key replay, which is stored
 * as JSON.stringify wrote it) must reach the caller whole, whatever the upstream adds.
 */
export const serializedAsBuilt: Pick<RouteShorthandOptions, 'serializerCompiler'> = {
  serializerCompiler: () => (data) => JSON.stringify(data),
};
