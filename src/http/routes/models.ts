// GET /v1/models: the configured catalogue, OpenAI's list shape plus `model_type` (the Gemini API's
// shape for a caller with its key header).
import type { FastifyPluginAsync } from 'fastify';
import { pricingView } from '../../account/pricing-view.js';
import type { PriceBook } from '../../billing/price-book.js';
import { notFound } from '../../errors.js';
import { asksForGeminiShape, geminiModelOf } from '../../formats/gemini/models.js';
import type { Catalogue } from '../../pipeline/catalogue.js';
import type { Pipeline } from '../../pipeline/metered-call.js';
import { requireCaller } from '../auth.js';
import { GetModelSchema, ListModelsSchema } from '../schemas/models.js';
import { serializedAsBuilt } from '../serialized-as-built.js';

type Listed = ReturnType<Catalogue['list']>[number];

/** The model as the list shows it, with its prices for the caller's plan. */
const modelViewFor =
  (prices: PriceBook, accountId: string) =>
  ({ id, config }: Listed) => ({
    id,
    object: 'model' as const,
    created: config.created,
    owned_by: config.owned_by,
    model_type: config.type,
    pricing: pricingView(prices.priceFor(accountId, id, config.price)),
  });

export const modelRoutes: FastifyPluginAsync<{ pipeline: Pipeline }> = async (app, { pipeline }) => {
  const { catalogue } = pipeline;
  // Reads are free but still count against the key's requests per minute.
  app.addHook('preHandler', async (request) => pipeline.admit(requireCaller(request), request.log));
  app.get('/v1/models', {
    schema: ListModelsSchema,
    ...serializedAsBuilt,
    handler: async (request) => {
      const { type } = request.query as { type?: string };
      // Google's SDK lists models here (its default API version is v1), with its own key header
      if (asksForGeminiShape(request.headers)) return { models: catalogue.list('chat').map(geminiModelOf) };
      return { object: 'list', data: catalogue.list(type).map(modelViewFor(pipeline.prices, requireCaller(request).accountId)) };
    },
  });
  app.get('/v1/models/:id', { schema: GetModelSchema, ...serializedAsBuilt }, async (request) => {
    const id = (request.params as { id: string }).id.replace(/^models\//, '');
    const found = catalogue.list().find((m) => m.id === id);
    if (!found) throw notFound(`no model named ${id}`);
    return asksForGeminiShape(request.headers) ? geminiModelOf(found) : modelViewFor(pipeline.prices, requireCaller(request).accountId)(found);
  });
};

/**
 * The same list under the account API, for the console: its session cookie is not taken by
 * /v1/models (keys only, like every call outside /v1/account), and its Keys page offers these
 * models when a key is limited to some. Registered where the account routes admit the caller.
 */
export const accountModelRoutes: FastifyPluginAsync<{ pipeline: Pipeline }> = async (app, { pipeline }) => {
  const schema = { ...ListModelsSchema, summary: 'The catalogue, as GET /v1/models gives it; also with the console’s session cookie.' };
  app.get('/v1/account/models', { schema, ...serializedAsBuilt }, async (request) => {
    const { type } = request.query as { type?: string };
    return { object: 'list', data: pipeline.catalogue.list(type).map(modelViewFor(pipeline.prices, requireCaller(request).accountId)) };
  });
};
