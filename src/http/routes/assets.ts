// GET /v1/assets: the account's generated media — images (the gallery) and videos, erased ones
// beside their originals (source_task_id).
import type { FastifyPluginAsync } from 'fastify';
import { isWebUrl } from '../../net/web-url.js';
import type { Pipeline } from '../../pipeline/metered-call.js';
import { listAssets } from '../../store/assets.js';
import type { Store } from '../../store/open.js';
import { requireCaller } from '../auth.js';
import { AssetsSchema } from '../schemas/files.js';
import { readLimit } from '../schemas/query.js';
import { serializedAsBuilt } from '../serialized-as-built.js';

export const assetRoutes: FastifyPluginAsync<{ store: Store; pipeline: Pipeline }> = async (app, deps) => {
  app.get('/v1/assets', {
    schema: AssetsSchema,
    ...serializedAsBuilt,
    handler: async (request) => {
      const caller = requireCaller(request);
      await deps.pipeline.admit(caller, request.log);
      const { kind } = request.query as { kind?: 'image' | 'video' };
      const assets = await listAssets(deps.store.db, { accountId: caller.accountId, kind, limit: readLimit(request.query) });
      return {
        object: 'list',
        // Rows a gateway stored before it kept non-http(s) media out are not shown either.
        data: assets
          .filter((a) => isWebUrl(a.url))
          .map((a) => ({
            id: a.id,
            kind: a.kind,
            url: a.url,
            task_id: a.task_id,
            source_task_id: a.source_task_id,
            created_at: new Date(a.created_at).toISOString(),
          })),
      };
    },
  });
};
