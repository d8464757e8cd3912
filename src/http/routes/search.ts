// POST /v1/search: web or global search, billed one call on success, nothing on failure.
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { invalidRequest, MESSAGES } from '../../errors.js';
import type { Pipeline } from '../../pipeline/metered-call.js';
import type { Store } from '../../store/open.js';
import { search } from '../../upstreams/volc-search/client.js';
import { withFields } from '../../with-fields.js';
import { meteredHandler } from '../metered-handler.js';
import { SearchSchema } from '../schemas/search.js';
import { serializedAsBuilt } from '../serialized-as-built.js';

const MODEL_FOR_TYPE: Record<string, string> = { web: 'vendor-web-search', global: 'vendor-global-search' };
const DEFAULT_COUNT = 10;
// The global edition returns at most 20 documents (volcengine-formats 3.4).
const GLOBAL_MAX_DOCS = 20;

interface SearchRequest {
  Type?: string;
  model?: string;
  Query: string;
  Count?: number;
  SearchType?: string;
  [field: string]: unknown;
}

/** Type picks the product line; an explicit search model routes too, and the two must agree. */
function searchModel(request: FastifyRequest): string {
  const body = request.body as SearchRequest;
  const byType = body.Type ? MODEL_FOR_TYPE[body.Type] : undefined;
  if (body.model && byType && body.model !== byType) throw invalidRequest(`model: ${body.model} disagrees with Type ${body.Type} (${byType})`);
  const model = body.model ?? byType;
  // The spec's own message: a search is routed by its model (Type names one).
  if (!model) throw invalidRequest(MESSAGES.modelRequired);
  return model;
}

export const searchRoutes: FastifyPluginAsync<{ pipeline: Pipeline; store: Store }> = async (app, deps) => {
  app.post('/v1/search', {
    schema: SearchSchema,
    ...serializedAsBuilt,
    preValidation: async (request) => {
      if ((request.body as SearchRequest | undefined)?.SearchType === 'image') throw invalidRequest('SearchType: image search is not supported; use web');
    },
    handler: meteredHandler<SearchRequest>(deps, {
      endpoint: 'search',
      modelType: 'search',
      modelOf: searchModel,
      estimate: () => ({ call: 1 }),
      async call({ body, model, signal }) {
        // Type and model only route: neither goes upstream, and neither is written into the result.
        const { Type: _type, model: _model, Count, SearchType, ...rest } = body;
        const count = Count ?? DEFAULT_COUNT;
        const edition = model.config.search_edition;
        const sent = edition === 'global' ? Math.min(count, GLOBAL_MAX_DOCS) : count;
        const upstreamBody = edition === 'global' ? withFields(rest, { DocCount: sent }) : withFields(rest, { SearchType: SearchType ?? 'web', Count: sent });
        const answer = await search(model.upstream, { edition, body: upstreamBody, signal });
        const { Type: _t, model: _m, ...result } = answer;
        // A capped Count is said, not hidden: fewer results than asked for is then no mystery.
        const answered = sent < count ? { ...result, CountCapped: { Requested: count, Sent: sent } } : result;
        return { kind: 'json', body: answered, units: { call: 1 } };
      },
    }),
  });
};
