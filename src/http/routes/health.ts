// GET /healthz: answers 200 while the process serves and its store answers and takes writes.
import type { FastifyPluginAsync } from 'fastify';
import { sql } from 'kysely';
import { GatewayError, unavailable } from '../../errors.js';
import type { StoreHealth } from '../../store/health.js';
import type { Store } from '../../store/open.js';
import { HealthSchema } from '../schemas/operations.js';
import { serializedAsBuilt } from '../serialized-as-built.js';

export const healthRoutes: FastifyPluginAsync<{ store: Store; health: StoreHealth; isClosing: () => boolean }> = async (app, { store, health, isClosing }) => {
  app.get('/healthz', { schema: HealthSchema, ...serializedAsBuilt }, async () => {
    if (isClosing()) throw unavailable();
    // Reads may still work while writes fail: a gateway that cannot record charges is not healthy.
    const problem = health.problem;
    if (problem) throw unavailable(`store refuses writes (${problem.code}) since ${new Date(problem.since).toISOString()}`);
    try {
      await sql`select 1`.execute(store.db);
    } catch (error) {
      health.failed(error); // a store that stalls or is cut off: new calls get 503 too, until a write lands
      throw new GatewayError(503, 'server_error', 'store unreachable', { cause: error });
    }
    return { status: 'ok' };
  });
};
