// The Gemini API, for callers using Google's SDK: `POST …/models/{model}:generateContent`,
// `:streamGenerateContent` (SSE with `?alt=sse`, else one JSON array) and `:countTokens`, under
// /v1beta and /v1 (the SDK's API version picks), and the model list under /v1beta. A model on a
// gemini channel is passed through; any other kind is served through the pivot. The key comes in
// `x-goog-api-key`, `?key=` or as everywhere else.
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { geminiPromptTokens, outputTokenCap, promptTokensOffLoop, tokenEstimate } from '../../billing/estimates.js';
import { MESSAGES, notFound } from '../../errors.js';
import { geminiFormats } from '../../formats/gemini/format.js';
import { geminiModelOf } from '../../formats/gemini/models.js';
import type { Pipeline } from '../../pipeline/metered-call.js';
import { callThroughPivot, type InboundFormat } from '../../pipeline/pivot-call.js';
import type { ResolvedModel } from '../../pipeline/types.js';
import type { Store } from '../../store/open.js';
import { callGeminiNative, countGeminiTokensNative } from '../../upstreams/gemini/native.js';
import type { GenerateContentRequest } from '../../upstreams/gemini/types.js';
import { requireCaller } from '../auth.js';
import { meteredHandler } from '../metered-handler.js';
import { GeminiCallSchema, GeminiGetModelSchema, GeminiListModelsSchema } from '../schemas/gemini.js';
import { serializedAsBuilt } from '../serialized-as-built.js';

const VERBS = new Set(['generateContent', 'streamGenerateContent', 'countTokens']);

/** `{model}:{verb}` from the path (the SDK may send the model as `models/{model}`). */
export function parseModelCall(call: string): { model: string; verb: string } | undefined {
  const colon = call.lastIndexOf(':');
  if (colon <= 0) return undefined;
  const verb = call.slice(colon + 1);
  if (!VERBS.has(verb)) return undefined;
  return { model: call.slice(0, colon).replace(/^models\//, ''), verb };
}

const modelOf = (request: FastifyRequest) => parseModelCall((request.params as { id: string }).id)?.model;
const SSE_FAILURE = `data: ${JSON.stringify({ error: { code: 500, message: MESSAGES.upstream, status: 'INTERNAL' } })}\r\n\r\n`;

function generateHandler(deps: { pipeline: Pipeline; store: Store }, format: InboundFormat<GenerateContentRequest>, form: 'plain' | 'sse' | 'array') {
  return meteredHandler<GenerateContentRequest>(deps, {
    endpoint: form === 'plain' ? 'gemini.generateContent' : 'gemini.streamGenerateContent',
    modelOf,
    // Native and translated streams end alike: the error as the stream's last SSE event or array element.
    streamFailure: form === 'array' ? `,${JSON.stringify({ error: { code: 500, message: MESSAGES.upstream, status: 'INTERNAL' } })}]` : SSE_FAILURE,
    modelType: 'chat',
    streams: () => form !== 'plain',
    withOutputCap: (body) =>
      body.generationConfig?.maxOutputTokens == null
        ? (tokens) => ({ ...body, generationConfig: { ...body.generationConfig, maxOutputTokens: tokens } })
        : undefined,
    estimate: (body, model) => {
      // The translation's refusals come before the hold: after it, a caller short of funds would hear 402, not what is wrong.
      if (model.upstream.channel.kind !== 'gemini') format.toPivot(body, model.upstreamModel);
      const output = outputTokenCap('generationConfig.maxOutputTokens', body.generationConfig?.maxOutputTokens, model);
      return tokenEstimate(model, (counting) => geminiPromptTokens(body, model, counting), output);
    },
    call: (args) => (args.model.upstream.channel.kind === 'gemini' ? callGeminiNative(args, form) : callThroughPivot(format, args)),
  });
}

/** Free, and rate-limited as every call: asked of a gemini upstream, else counted by the gateway's tokenizer. */
async function countTokens(request: FastifyRequest, model: ResolvedModel) {
  const body = request.body as GenerateContentRequest & { generateContentRequest?: GenerateContentRequest };
  // The SDK sends the contents either at the top or wrapped, as the REST reference allows both.
  const counted = body.generateContentRequest ?? body;
  if (model.upstream.channel.kind === 'gemini') {
    return { totalTokens: await countGeminiTokensNative(model, counted, request.log) };
  }
  return { totalTokens: await promptTokensOffLoop(model, (counting) => geminiPromptTokens(counted, model, counting)) };
}

export const geminiRoutes: FastifyPluginAsync<{ pipeline: Pipeline; store: Store }> = async (app, deps) => {
  const { pipeline } = deps;
  const handlers = {
    plain: generateHandler(deps, geminiFormats.plain, 'plain'),
    sse: generateHandler(deps, geminiFormats.sse, 'sse'),
    array: generateHandler(deps, geminiFormats.array, 'array'),
  };
  for (const version of ['v1beta', 'v1']) {
    app.post(`/${version}/models/:id`, {
      schema: GeminiCallSchema,
      config: { keyInQuery: true },
      ...serializedAsBuilt,
      async handler(request, reply) {
        const call = parseModelCall((request.params as { id: string }).id);
        if (!call) throw notFound('no such method: expected {model}:generateContent, :streamGenerateContent or :countTokens');
        if (call.verb === 'countTokens') {
          const caller = requireCaller(request);
          await pipeline.admit(caller, request.log);
          return countTokens(request, pipeline.catalogueFor(caller.livemode).resolve(call.model, 'chat'));
        }
        const form = call.verb === 'generateContent' ? 'plain' : (request.query as { alt?: string }).alt === 'sse' ? 'sse' : 'array';
        return handlers[form].call(this, request, reply);
      },
    });
  }
  // GET /v1/models stays the OpenAI list, unless the caller sends the Gemini API's key header (models.ts).
  app.get('/v1beta/models', { schema: GeminiListModelsSchema, config: { keyInQuery: true }, ...serializedAsBuilt }, async (request) => {
    const caller = requireCaller(request);
    await pipeline.admit(caller, request.log);
    return { models: pipeline.catalogueFor(caller.livemode).list('chat').map(geminiModelOf) };
  });
  app.get('/v1beta/models/:id', { schema: GeminiGetModelSchema, config: { keyInQuery: true }, ...serializedAsBuilt }, async (request) => {
    const caller = requireCaller(request);
    await pipeline.admit(caller, request.log);
    const id = (request.params as { id: string }).id.replace(/^models\//, '');
    const found = pipeline
      .catalogueFor(caller.livemode)
      .list('chat')
      .find((model) => model.id === id);
    if (!found) throw notFound(`no chat model named ${id}`);
    return geminiModelOf(found);
  });
};
