// POST /v1/completions: OpenAI's legacy text completions, plain or streamed, billed on the upstream's
// token usage as chat is. Passed through to OpenAI-style channels (Azure too) only: the legacy API
// has no translation onto other protocols, so a model served by another kind of channel is a 400.
import type { FastifyPluginAsync } from 'fastify';
import { outputTokenCap, tokenEstimate } from '../../billing/estimates.js';
import { valueTokens } from '../../billing/prompt-tokens.js';
import { countTokens } from '../../billing/tokens.js';
import { invalidRequest, MESSAGES } from '../../errors.js';
import type { Pipeline } from '../../pipeline/metered-call.js';
import type { CallArgs, MeteredAnswer, ResolvedModel } from '../../pipeline/types.js';
import type { Store } from '../../store/open.js';
import { tokensOf } from '../../upstreams/openai-chat/usage.js';
import { createCompletion, streamCompletion } from '../../upstreams/openai-completions/client.js';
import { choicesMade, requireCompletionPrompt } from '../../upstreams/openai-completions/prompt.js';
import type { CompletionRequest } from '../../upstreams/openai-completions/types.js';
import { completionChoicesText } from '../../upstreams/openai-completions/usage.js';
import { withPublicModel } from '../../upstreams/public-model.js';
import { withFields } from '../../with-fields.js';
import { meteredHandler } from '../metered-handler.js';
import { CompletionSchema } from '../schemas/completions.js';
import { serializedAsBuilt } from '../serialized-as-built.js';

const COMPLETIONS_KINDS = new Set(['openai', 'azure']);

/** Every channel of the model must serve the legacy API: a call may fail over to any of them. */
function requireCompletionsChannels(model: ResolvedModel): void {
  for (const route of model.routes) {
    const kind = route.keys[0]?.channel.kind;
    if (kind !== undefined && !COMPLETIONS_KINDS.has(kind)) {
      throw invalidRequest(
        `model: ${model.id} is served by a ${kind} channel, which has no completions API; use /v1/chat/completions, or a model on an OpenAI or Azure OpenAI channel`,
      );
    }
  }
}

async function callCompletions({ body, model, estimate, signal }: CallArgs<CompletionRequest>): Promise<MeteredAnswer> {
  if (body.stream === true) {
    const upstreamBody = withFields(body, { model: model.upstreamModel }) as CompletionRequest;
    const { body: stream, meter } = await streamCompletion(model.upstream, upstreamBody, {
      signal,
      publicModel: model.id,
      tokenizer: model.config.tokenizer,
    });
    return { kind: 'stream', contentType: 'text/event-stream; charset=utf-8', body: stream, meter };
  }
  const upstreamBody = withFields(body, { model: model.upstreamModel, stream: false }) as CompletionRequest;
  const { completion, text } = await createCompletion(model.upstream, upstreamBody, signal);
  // No usage (or a figure that is not sane): the gateway counts the prompt and the choices' text.
  const counted = () => ({ input_token: estimate.input_token ?? 0, output_token: countTokens(completionChoicesText(completion), model.config.tokenizer) });
  const units = completion.usage ? tokensOf(completion.usage) : counted();
  return { kind: 'json', body: withPublicModel(text, completion, model.id), units, counted };
}

export const completionsRoutes: FastifyPluginAsync<{ pipeline: Pipeline; store: Store }> = async (app, deps) => {
  app.post('/v1/completions', {
    schema: CompletionSchema,
    ...serializedAsBuilt,
    // Before the schema: its union of four forms can only say "must match a schema in anyOf".
    preValidation: async (request) => {
      const body = request.body as { prompt?: unknown } | undefined;
      if (typeof body === 'object' && body !== null) requireCompletionPrompt(body.prompt);
    },
    handler: meteredHandler<CompletionRequest>(deps, {
      endpoint: 'completions',
      // OpenAI's clients raise a `data:` object carrying `error`, as in chat.
      streamFailure: `data: ${JSON.stringify({ error: { message: MESSAGES.upstream, type: 'server_error', param: null, code: null } })}\n\n`,
      modelType: 'chat',
      streams: (body) => body.stream === true,
      // One choice only: a lowered cap is the whole output the balance holds, which n choices would each take.
      withOutputCap: (body) => (body.max_tokens == null && choicesMade(body) === 1 ? (tokens) => ({ ...body, max_tokens: tokens }) : undefined),
      estimate: (body, model) => {
        // Before the hold: a caller short of funds would otherwise hear 402, not what is wrong.
        requireCompletionsChannels(model);
        const output = outputTokenCap('max_tokens', body.max_tokens, model) * choicesMade(body);
        return tokenEstimate(model, (counting) => valueTokens(body.prompt, counting) + valueTokens(body.suffix ?? '', counting), output);
      },
      call: callCompletions,
    }),
  });
};
