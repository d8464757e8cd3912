// POST /v1/responses: passed through to an OpenAI-style upstream's responses API (Azure's too), plain
// or as typed events, billed on the usage of its terminal event; an upstream without the API has its
// refusal relayed. Any other kind is served through the pivot.
import type { FastifyPluginAsync } from 'fastify';
import { outputTokenCap, responsesPromptTokens, tokenEstimate } from '../../billing/estimates.js';
import { countTokens } from '../../billing/tokens.js';
import { invalidRequest, MESSAGES, upstreamPassThrough } from '../../errors.js';
import { responsesFormat } from '../../formats/responses/format.js';
import type { ResponsesRequest } from '../../formats/responses/types.js';
import type { Pipeline } from '../../pipeline/metered-call.js';
import { callThroughPivot } from '../../pipeline/pivot-call.js';
import type { CallArgs, MeteredAnswer } from '../../pipeline/types.js';
import type { Store } from '../../store/open.js';
import { UpstreamHttpError } from '../../upstreams/http.js';
import { createResponse, responsesTokens, streamResponse } from '../../upstreams/openai-responses/client.js';
import { meteredHandler } from '../metered-handler.js';
import { ResponsesSchema } from '../schemas/responses.js';
import { serializedAsBuilt } from '../serialized-as-built.js';

// An upstream without the API (spec 4.7) has its answer relayed as it came. A refusal of the
// request itself is the caller's to read, in our error shape; auth, quota and server faults on
// our channel stay behind a 502.
const NO_SUCH_API = new Set([404, 405]);
const REQUEST_REFUSED = new Set([400, 422]);

const speaksResponses = (kind: string) => kind === 'openai' || kind === 'azure';

async function callNative({ body, model, estimate, signal }: CallArgs<ResponsesRequest>): Promise<MeteredAnswer> {
  const upstreamBody = { ...body, model: model.upstreamModel };
  try {
    if (body.stream === true) {
      const { body: stream, meter } = await streamResponse(model.upstream, upstreamBody, {
        signal,
        publicModel: model.id,
        tokenizer: model.config.tokenizer,
      });
      return { kind: 'stream', contentType: 'text/event-stream; charset=utf-8', body: stream, meter };
    }
    const response = await createResponse(model.upstream, upstreamBody, signal);
    const counted = () => ({
      input_token: estimate.input_token ?? 0,
      output_token: countTokens(JSON.stringify(response.output ?? ''), model.config.tokenizer),
    });
    const units = response.usage ? responsesTokens(response.usage) : counted();
    return { kind: 'json', body: { ...response, model: model.id }, units, counted };
  } catch (error) {
    if (error instanceof UpstreamHttpError && NO_SUCH_API.has(error.statusCode)) {
      throw upstreamPassThrough(error.statusCode, error.body, error.contentType);
    }
    if (error instanceof UpstreamHttpError && REQUEST_REFUSED.has(error.statusCode))
      throw invalidRequest(error.reason() ? `upstream refused the request: ${error.reason()}` : 'upstream refused the request');
    throw error;
  }
}

export const responsesRoutes: FastifyPluginAsync<{ pipeline: Pipeline; store: Store }> = async (app, deps) => {
  app.post('/v1/responses', {
    schema: ResponsesSchema,
    ...serializedAsBuilt,
    handler: meteredHandler<ResponsesRequest>(deps, {
      endpoint: 'responses',
      // The recorded streams nest the error; the SDK type has it at the top: both, as openai-node reads either.
      streamFailure: `event: error\ndata: ${JSON.stringify({ type: 'error', code: 'server_error', message: MESSAGES.upstream, param: null, error: { type: 'server_error', code: 'server_error', message: MESSAGES.upstream, param: null } })}\n\n`,
      modelType: 'chat',
      streams: (body) => body.stream === true,
      withOutputCap: (body) => (body.max_output_tokens == null ? (tokens) => ({ ...body, max_output_tokens: tokens }) : undefined),
      estimate: (body, model) => {
        // The translation's refusals come before the hold: after it, a caller short of funds would hear 402, not what is wrong.
        if (!speaksResponses(model.upstream.channel.kind)) responsesFormat.toPivot(body, model.upstreamModel);
        const output = outputTokenCap('max_output_tokens', body.max_output_tokens, model);
        return tokenEstimate(model, (counting) => responsesPromptTokens(body, model, counting), output);
      },
      call: (args) => (speaksResponses(args.model.upstream.channel.kind) ? callNative(args) : callThroughPivot(responsesFormat, args)),
    }),
  });
};
