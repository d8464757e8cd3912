// POST /v1/messages: the messages format, served by a messages-native upstream as it is, or
// translated to and from an OpenAI-style one. Billed on the upstream's token usage.
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { messagesPromptTokens, outputTokenCap, tokenEstimate } from '../../billing/estimates.js';
import { countTokens } from '../../billing/tokens.js';
import { invalidRequest, MESSAGES } from '../../errors.js';
import type { Pipeline } from '../../pipeline/metered-call.js';
import type { CallArgs, MeteredAnswer } from '../../pipeline/types.js';
import { randomHex } from '../../store/ids.js';
import type { Store } from '../../store/open.js';
import { ANTHROPIC_VERSION, createNativeMessage, streamNativeMessage } from '../../upstreams/anthropic/client.js';
import type { MessagesRequest } from '../../upstreams/anthropic/types.js';
import { nativeTokens } from '../../upstreams/anthropic/usage.js';
import { createChatCompletion } from '../../upstreams/openai-chat/client.js';
import { messagesToChatRequest } from '../../upstreams/openai-chat/from-messages.js';
import { streamChatAsMessages } from '../../upstreams/openai-chat/messages-stream.js';
import { chatToMessage } from '../../upstreams/openai-chat/to-messages.js';
import { completionText, tokensOf } from '../../upstreams/openai-chat/usage.js';
import { withFields } from '../../with-fields.js';
import { meteredHandler } from '../metered-handler.js';
import { MessagesSchema } from '../schemas/messages.js';
import { serializedAsBuilt } from '../serialized-as-built.js';

const SSE = 'text/event-stream; charset=utf-8';

/** The spec names the header `vendor-version`; the official SDKs send `anthropic-version`. Either, with the one value. */
async function requireVersion(request: FastifyRequest) {
  const given = request.headers['vendor-version'] ?? request.headers['anthropic-version'];
  if (given !== ANTHROPIC_VERSION) {
    // The official SDKs send a later anthropic-version unless told; say exactly what to send.
    const fix = `send anthropic-version: ${ANTHROPIC_VERSION} (or vendor-version: ${ANTHROPIC_VERSION})`;
    throw invalidRequest(given === undefined ? `anthropic-version header is required: ${fix}` : `anthropic-version: ${given} is not supported; ${fix}`);
  }
}

const messageId = () => `msg_${randomHex(12)}`;

async function callNative({ body, model, estimate, signal }: CallArgs<MessagesRequest>): Promise<MeteredAnswer> {
  const upstreamBody = { ...body, model: model.upstreamModel };
  if (body.stream === true) {
    const { body: stream, meter } = await streamNativeMessage(model.upstream, {
      body: upstreamBody,
      signal,
      publicModel: model.id,
      tokenizer: model.config.tokenizer,
    });
    return { kind: 'stream', contentType: SSE, body: stream, meter };
  }
  const message = await createNativeMessage(model.upstream, { body: upstreamBody, signal });
  const counted = () => ({ input_token: estimate.input_token ?? 0, output_token: countTokens(JSON.stringify(message.content ?? ''), model.config.tokenizer) });
  const units = message.usage ? nativeTokens(message.usage) : counted();
  return { kind: 'json', body: { ...message, model: model.id }, units, counted };
}

async function callViaChat({ body, model, estimate, signal }: CallArgs<MessagesRequest>): Promise<MeteredAnswer> {
  const request = messagesToChatRequest(body, { upstreamModel: model.upstreamModel });
  const ids = { id: messageId(), model: model.id };
  if (body.stream === true) {
    const translated = await streamChatAsMessages(model.upstream, {
      request,
      ids: withFields(ids, { inputTokens: estimate.input_token ?? 0 }),
      signal,
      tokenizer: model.config.tokenizer,
    });
    return { kind: 'stream', contentType: SSE, body: translated.body, meter: translated.meter };
  }
  const completion = await createChatCompletion(model.upstream, request, signal);
  const counted = () => ({ input_token: estimate.input_token ?? 0, output_token: countTokens(completionText(completion), model.config.tokenizer) });
  const units = completion.usage ? tokensOf(completion.usage) : counted();
  return { kind: 'json', body: chatToMessage(completion, ids), units, counted };
}

export const messagesRoutes: FastifyPluginAsync<{ pipeline: Pipeline; store: Store }> = async (app, deps) => {
  app.post('/v1/messages', {
    schema: MessagesSchema,
    ...serializedAsBuilt,
    preValidation: requireVersion,
    handler: meteredHandler<MessagesRequest>(deps, {
      endpoint: 'messages',
      // A native stream that breaks ends as a translated one does: with the messages `error` event.
      streamFailure: `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: 'api_error', message: MESSAGES.upstream } })}\n\n`,
      modelType: 'chat',
      streams: (body) => body.stream === true,
      estimate: (body, model) => {
        // The translation's own refusals (a document by URL for an OpenAI-style upstream) come
        // before the hold: after it, a caller short of funds would hear 402, not what is wrong.
        if (model.upstream.channel.kind !== 'anthropic') messagesToChatRequest(body, { upstreamModel: model.upstreamModel });
        const output = outputTokenCap('max_tokens', body.max_tokens, model);
        return tokenEstimate(model, (counting) => messagesPromptTokens(body, model, counting), output);
      },
      call: (args) => (args.model.upstream.channel.kind === 'anthropic' ? callNative(args) : callViaChat(args)),
    }),
  });
};
