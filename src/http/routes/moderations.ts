// POST /v1/moderations: OpenAI moderations passed through to an OpenAI-style channel, billed one call
// on success (at the model's price per call, which may be 0) and nothing on failure.
import type { FastifyPluginAsync } from 'fastify';
import type { Pipeline } from '../../pipeline/metered-call.js';
import type { Store } from '../../store/open.js';
import { createModeration, type ModerationRequest } from '../../upstreams/openai-moderations/client.js';
import { requireModerationInput } from '../../upstreams/openai-moderations/input.js';
import { withPublicModel } from '../../upstreams/public-model.js';
import { withFields } from '../../with-fields.js';
import { meteredHandler } from '../metered-handler.js';
import { ModerationSchema } from '../schemas/moderations.js';
import { serializedAsBuilt } from '../serialized-as-built.js';

export const moderationsRoutes: FastifyPluginAsync<{ pipeline: Pipeline; store: Store }> = async (app, deps) => {
  app.post('/v1/moderations', {
    schema: ModerationSchema,
    ...serializedAsBuilt,
    // Before the schema: its union of forms can only say "must match a schema in anyOf".
    preValidation: async (request) => {
      const body = request.body as { input?: unknown } | undefined;
      if (typeof body === 'object' && body !== null) requireModerationInput(body.input);
    },
    handler: meteredHandler<ModerationRequest>(deps, {
      endpoint: 'moderations',
      modelType: 'moderation',
      estimate: () => ({ call: 1 }),
      async call({ body, model, signal }) {
        const upstreamBody = withFields(body, { model: model.upstreamModel }) as ModerationRequest;
        const { answer, text } = await createModeration(model.upstream, upstreamBody, signal);
        return { kind: 'json', body: withPublicModel(text, answer, model.id), units: { call: 1 } };
      },
    }),
  });
};
