// GET /healthz: answers 200 while the process serves and its store answers.
import type { FastifyPluginAsync } from 'fastify';
import { sql } from 'kysely';
import { GatewayError, unavailable } from '../../errors.js';
import type { Store } from '../../store/open.js';

export const healthRoutes: FastifyPluginAsync<{ store: Store; isClosing: () => boolean }> = async (app, { store, isClosing }) => {
  app.get('/healthz', async () => {
    if (isClosing()) throw unavailable();
    try {
      await sql`select 1`.execute(store.db);
    } catch (error) {
      throw new GatewayError(503, 'server_error', 'store unreachable', { cause: error });
    }
    return { status: 'ok' };
  });
};
