// POST /v1/chat/completions: OpenAI chat, plain or streamed, billed on the upstream's token usage.
// Passed through to OpenAI-style upstreams (Azure too); translated through the pivot for the others.
import type { FastifyPluginAsync } from 'fastify';
import { chatPromptTokens, outputTokenCap, tokenEstimate } from '../../billing/estimates.js';
import { countTokens } from '../../billing/tokens.js';
import { MESSAGES } from '../../errors.js';
import { chatFormat } from '../../formats/chat/format.js';
import type { Pipeline } from '../../pipeline/metered-call.js';
import { callThroughPivot } from '../../pipeline/pivot-call.js';
import type { CallArgs, MeteredAnswer } from '../../pipeline/types.js';
import type { Store } from '../../store/open.js';
import { chatCompletionWithText, streamChatCompletion } from '../../upstreams/openai-chat/client.js';
import type { ChatRequest } from '../../upstreams/openai-chat/types.js';
import { completionText, tokensOf } from '../../upstreams/openai-chat/usage.js';
import { withPublicModel } from '../../upstreams/public-model.js';
import { withFields } from '../../with-fields.js';
import { meteredHandler } from '../metered-handler.js';
import { ChatCompletionSchema } from '../schemas/chat.js';
import { serializedAsBuilt } from '../serialized-as-built.js';

const speaksChat = (kind: string) => kind === 'openai' || kind === 'azure';

async function callNative({ body, model, estimate, signal }: CallArgs<ChatRequest>): Promise<MeteredAnswer> {
  if (body.stream === true) {
    const upstreamBody = { ...body, model: model.upstreamModel };
    const { body: stream, meter } = await streamChatCompletion(model.upstream, upstreamBody, {
      signal,
      publicModel: model.id,
      tokenizer: model.config.tokenizer,
    });
    return { kind: 'stream', contentType: 'text/event-stream; charset=utf-8', body: stream, meter };
  }
  // One copy of the body, with the channel's model and the stream flag the client sends
  const upstreamBody: ChatRequest = withFields(body, { model: model.upstreamModel, stream: false }) as ChatRequest;
  const { completion, text } = await chatCompletionWithText(model.upstream, upstreamBody, signal);
  // No usage (or a figure that is not sane): the gateway counts the answer.
  const counted = () => ({ input_token: estimate.input_token ?? 0, output_token: countTokens(completionText(completion), model.config.tokenizer) });
  const units = completion.usage ? tokensOf(completion.usage) : counted();
  return { kind: 'json', body: withPublicModel(text, completion, model.id), units, counted };
}

export const chatRoutes: FastifyPluginAsync<{ pipeline: Pipeline; store: Store }> = async (app, deps) => {
  app.post('/v1/chat/completions', {
    schema: ChatCompletionSchema,
    ...serializedAsBuilt,
    handler: meteredHandler<ChatRequest>(deps, {
      endpoint: 'chat.completions',
      // OpenAI's clients raise a `data:` object carrying `error`.
      streamFailure: `data: ${JSON.stringify({ error: { message: MESSAGES.upstream, type: 'server_error', param: null, code: null } })}\n\n`,
      modelType: 'chat',
      streams: (body) => body.stream === true,
      // max_tokens, the field OpenAI-style upstreams all read (the messages translation sends it too)
      withOutputCap: (body) => (body.max_tokens == null && body.max_completion_tokens == null ? (tokens) => ({ ...body, max_tokens: tokens }) : undefined),
      estimate: (body, model) => {
        // The translation's refusals come before the hold: after it, a caller short of funds would hear 402, not what is wrong.
        if (!speaksChat(model.upstream.channel.kind)) chatFormat.toPivot(body, model.upstreamModel);
        const capField = body.max_completion_tokens === undefined ? 'max_tokens' : 'max_completion_tokens';
        const output = outputTokenCap(capField, body.max_completion_tokens ?? body.max_tokens, model);
        return tokenEstimate(model, (counting) => chatPromptTokens(body, model, counting), output);
      },
      call: (args) => (speaksChat(args.model.upstream.channel.kind) ? callNative(args) : callThroughPivot(chatFormat, args)),
    }),
  });
};
