// POST /v1/messages: the messages format, served by a messages-native upstream as it is, or
// translated through the pivot for any other kind. Billed on the upstream's token usage.
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { messagesPromptTokens, outputTokenCap, tokenEstimate } from '../../billing/estimates.js';
import { countTokens } from '../../billing/tokens.js';
import { invalidRequest, MESSAGES } from '../../errors.js';
import { messagesFormat } from '../../formats/messages/format.js';
import type { Pipeline } from '../../pipeline/metered-call.js';
import { callThroughPivot } from '../../pipeline/pivot-call.js';
import type { CallArgs, MeteredAnswer } from '../../pipeline/types.js';
import type { Store } from '../../store/open.js';
import { ANTHROPIC_VERSION, createNativeMessage, streamNativeMessage } from '../../upstreams/anthropic/client.js';
import type { MessagesRequest } from '../../upstreams/anthropic/types.js';
import { nativeTokens } from '../../upstreams/anthropic/usage.js';
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
        if (model.upstream.channel.kind !== 'anthropic') messagesFormat.toPivot(body, model.upstreamModel);
        const output = outputTokenCap('max_tokens', body.max_tokens, model);
        return tokenEstimate(model, (counting) => messagesPromptTokens(body, model, counting), output);
      },
      call: (args) => (args.model.upstream.channel.kind === 'anthropic' ? callNative(args) : callThroughPivot(messagesFormat, args)),
    }),
  });
};
