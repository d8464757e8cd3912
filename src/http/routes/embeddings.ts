// POST /v1/embeddings: OpenAI embeddings, billed on the input tokens. Passed through to OpenAI-style
// upstreams (Azure too) with the channel's model; translated to embedContent for Gemini channels.
import type { FastifyPluginAsync } from 'fastify';
import { promptTokensOffLoop } from '../../billing/estimates.js';
import type { Units } from '../../billing/prices.js';
import { valueTokens } from '../../billing/prompt-tokens.js';
import type { Pipeline } from '../../pipeline/metered-call.js';
import type { CallArgs, MeteredAnswer, ResolvedModel } from '../../pipeline/types.js';
import type { Store } from '../../store/open.js';
import { callGeminiEmbeddings, geminiTexts } from '../../upstreams/gemini/embeddings.js';
import { publicEmbeddings, reportedEmbeddingUnits } from '../../upstreams/openai-embeddings/answer.js';
import { createEmbeddings } from '../../upstreams/openai-embeddings/client.js';
import { type EmbeddingsRequest, requireEmbeddingInput } from '../../upstreams/openai-embeddings/input.js';
import { withFields } from '../../with-fields.js';
import { meteredHandler } from '../metered-handler.js';
import { EmbeddingsSchema } from '../schemas/embeddings.js';
import { serializedAsBuilt } from '../serialized-as-built.js';

const isGemini = (model: ResolvedModel) => model.upstream.channel.kind === 'gemini';

async function callOpenAiStyle({ body, model, estimate, signal }: CallArgs<EmbeddingsRequest>): Promise<MeteredAnswer> {
  const upstreamBody = withFields(body, { model: model.upstreamModel }) as EmbeddingsRequest;
  const { answer, text } = await createEmbeddings(model.upstream, upstreamBody, signal);
  // No usage reported: the input as the gateway counted it for the hold.
  const counted = (): Units => ({ input_token: estimate.input_token ?? 0 });
  return { kind: 'json', body: publicEmbeddings(text, answer, model.id, body.encoding_format), units: reportedEmbeddingUnits(answer) ?? counted(), counted };
}

/** The input's tokens: texts with the model's tokenizer, token ids one each. */
function inputEstimate(body: EmbeddingsRequest, model: ResolvedModel): Units | Promise<Units> {
  // Before the hold: a caller short of funds would otherwise hear 402, not what is wrong.
  if (isGemini(model)) geminiTexts(body.input, model.id);
  const tokens = promptTokensOffLoop(model, (counting) => valueTokens(body.input, counting));
  return typeof tokens === 'number' ? { input_token: tokens } : tokens.then((n) => ({ input_token: n }));
}

export const embeddingsRoutes: FastifyPluginAsync<{ pipeline: Pipeline; store: Store }> = async (app, deps) => {
  app.post('/v1/embeddings', {
    schema: EmbeddingsSchema,
    ...serializedAsBuilt,
    // Before the schema: its union of four forms can only say "must be string or array".
    preValidation: async (request) => {
      const body = request.body as { input?: unknown } | undefined;
      if (typeof body === 'object' && body !== null) requireEmbeddingInput(body.input);
    },
    handler: meteredHandler<EmbeddingsRequest>(deps, {
      endpoint: 'embeddings',
      modelType: 'embedding',
      estimate: inputEstimate,
      call: (args) => (isGemini(args.model) ? callGeminiEmbeddings(args) : callOpenAiStyle(args)),
    }),
  });
};
