// POST /v1/messages/count_tokens (the Anthropic SDK's messages.countTokens): free and rate-limited.
// Asked of the upstream where it has the call (anthropic, and gemini's countTokens through the
// pivot), else counted by the gateway's tokenizer, the count its holds use.
import type { FastifyPluginAsync } from 'fastify';
import { messagesPromptTokens, promptTokensOffLoop } from '../../billing/estimates.js';
import { requireModelAllowed } from '../../billing/key-limits.js';
import { messagesFormat } from '../../formats/messages/format.js';
import type { Pipeline } from '../../pipeline/metered-call.js';
import type { ResolvedModel } from '../../pipeline/types.js';
import { countAnthropicTokens } from '../../upstreams/anthropic/count-tokens.js';
import type { MessagesRequest } from '../../upstreams/anthropic/types.js';
import { countGeminiTokensNative } from '../../upstreams/gemini/native.js';
import { geminiRequestOf } from '../../upstreams/gemini/to-upstream.js';
import { requireCaller } from '../auth.js';
import { MessagesCountTokensSchema } from '../schemas/messages.js';

async function inputTokensOf(body: MessagesRequest, model: ResolvedModel, log: Parameters<typeof countGeminiTokensNative>[2]): Promise<number> {
  const signal = AbortSignal.timeout(model.upstream.channel.timeouts.headers_ms);
  switch (model.upstream.channel.kind) {
    case 'anthropic':
      return countAnthropicTokens(model.upstream, { ...body, model: model.upstreamModel }, signal);
    case 'gemini':
      return countGeminiTokensNative(model, geminiRequestOf(messagesFormat.toPivot(body, model.upstreamModel)), log);
    default:
      // what the translation cannot carry is refused here as on /v1/messages
      if (model.upstream.channel.kind !== 'openai' && model.upstream.channel.kind !== 'azure') messagesFormat.toPivot(body, model.upstreamModel);
      return promptTokensOffLoop(model, (counting) => messagesPromptTokens(body, model, counting));
  }
}

export const messagesCountTokensRoutes: FastifyPluginAsync<{ pipeline: Pipeline }> = async (app, { pipeline }) => {
  app.post('/v1/messages/count_tokens', { schema: MessagesCountTokensSchema }, async (request) => {
    const caller = requireCaller(request);
    await pipeline.admit(caller, request.log);
    const body = request.body as MessagesRequest;
    const model = pipeline.catalogueFor(caller.livemode).resolve(body.model, 'chat');
    requireModelAllowed(caller.limits, body.model, model.id);
    try {
      return { input_tokens: await inputTokensOf(body, model, request.log) };
    } catch (error) {
      throw pipeline.upstreamFailure(error, model, request.log);
    }
  });
};
