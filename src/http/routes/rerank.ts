// POST /v1/rerank: documents ranked by relevance to a query, in Cohere's and Jina's shape, passed to
// the channel's /v1/rerank. Billed one call at the model's price per call, and where the model is
// priced on input tokens, those too: held on the gateway's count of the query and the documents,
// settled on the upstream's count (the gateway's when it reports none). A failure costs nothing.
import { randomUUID } from 'node:crypto';
import type { FastifyPluginAsync } from 'fastify';
import { promptTokensOffLoop } from '../../billing/estimates.js';
import type { Units } from '../../billing/prices.js';
import { valueTokens } from '../../billing/prompt-tokens.js';
import type { Pipeline } from '../../pipeline/metered-call.js';
import type { ResolvedModel } from '../../pipeline/types.js';
import type { Store } from '../../store/open.js';
import { publicRerank, rerankUnits } from '../../upstreams/rerank/answer.js';
import { rerank } from '../../upstreams/rerank/client.js';
import { documentTexts, type RerankRequest, requireRerankDocuments } from '../../upstreams/rerank/request.js';
import { meteredHandler } from '../metered-handler.js';
import { RerankSchema } from '../schemas/rerank.js';
import { serializedAsBuilt } from '../serialized-as-built.js';

const pricedOnTokens = (model: ResolvedModel) => (model.config.price.input_token ?? 0) > 0;

/** One call; with a price per input token, the query's and the documents' tokens as well. */
function rerankEstimate(body: RerankRequest, model: ResolvedModel): Units | Promise<Units> {
  if (!pricedOnTokens(model)) return { call: 1 };
  const tokens = promptTokensOffLoop(model, (counting) => valueTokens(body.query, counting) + valueTokens(documentTexts(body), counting));
  return typeof tokens === 'number' ? { call: 1, input_token: tokens } : tokens.then((n) => ({ call: 1, input_token: n }));
}

export const rerankRoutes: FastifyPluginAsync<{ pipeline: Pipeline; store: Store }> = async (app, deps) => {
  app.post('/v1/rerank', {
    schema: RerankSchema,
    ...serializedAsBuilt,
    // Before the schema, for a message naming the document at fault.
    preValidation: async (request) => {
      const body = request.body as { documents?: unknown } | undefined;
      if (typeof body === 'object' && body !== null) requireRerankDocuments(body.documents);
    },
    handler: meteredHandler<RerankRequest>(deps, {
      endpoint: 'rerank',
      modelType: 'rerank',
      estimate: rerankEstimate,
      async call({ body, model, estimate, signal }) {
        // The documents go up as texts, and come back (when asked for) from the request, not the upstream.
        const upstreamBody = { ...body, model: model.upstreamModel, documents: documentTexts(body) };
        const answer = await rerank(model.upstream, upstreamBody, signal);
        const counted = (): Units => (pricedOnTokens(model) ? { call: 1, input_token: estimate.input_token ?? 0 } : { call: 1 });
        const shown = publicRerank(answer, {
          documents: body.documents,
          topN: body.top_n ?? undefined,
          returnDocuments: body.return_documents === true,
          publicModel: model.id,
          id: `rerank-${randomUUID()}`,
        });
        return { kind: 'json', body: shown, units: rerankUnits(answer, pricedOnTokens(model), estimate.input_token ?? 0), counted };
      },
    }),
  });
};
