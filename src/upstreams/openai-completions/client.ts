// OpenAI's legacy completions over an OpenAI-style channel (Azure's deployment path too): a whole
// answer, or the SSE stream passed through with its usage read on the way.
import type { Readable } from 'node:stream';
import type { TokenizerName } from '../../billing/tokens.js';
import { withFields } from '../../with-fields.js';
import { postForText, postJson } from '../http.js';
import { MalformedAnswerError } from '../malformed.js';
import { openAiAuthHeaders, openAiPath } from '../openai-chat/endpoint.js';
import type { Upstream } from '../pool.js';
import { observeSseJson } from '../sse.js';
import type { Completion, CompletionRequest } from './types.js';
import { CompletionStreamMeter } from './usage.js';

/** A whole completion, and the text it came in (passed on as it is when it can be). */
export async function createCompletion(upstream: Upstream, body: CompletionRequest, signal: AbortSignal): Promise<{ completion: Completion; text: string }> {
  const text = await postForText(upstream, {
    path: openAiPath(upstream, 'completions', body.model),
    body: body.stream === false ? body : withFields(body, { stream: false }),
    headers: openAiAuthHeaders(upstream),
    signal,
  });
  let completion: unknown;
  try {
    completion = JSON.parse(text);
  } catch {
    throw new MalformedAnswerError('the upstream answered a completion with a body that is not JSON');
  }
  if (typeof completion !== 'object' || completion === null || !Array.isArray((completion as Completion).choices)) {
    throw new MalformedAnswerError('the upstream answered a completion without choices');
  }
  return { completion: completion as Completion, text };
}

export interface CompletionStream {
  body: Readable;
  meter: CompletionStreamMeter;
}

/**
 * Streams a completion through, always asking the upstream for usage (billing needs it); the usage
 * chunk reaches the client only when it asked for it, as OpenAI itself would.
 */
export async function streamCompletion(
  upstream: Upstream,
  body: CompletionRequest,
  args: { signal: AbortSignal; publicModel: string; tokenizer: TokenizerName },
): Promise<CompletionStream> {
  const clientWantsUsage = body.stream_options?.include_usage === true;
  const upstreamBody = withFields(body, { stream: true, stream_options: withFields(body.stream_options ?? {}, { include_usage: true }) });
  const response = await postJson(upstream, {
    path: openAiPath(upstream, 'completions', body.model),
    body: upstreamBody,
    headers: openAiAuthHeaders(upstream),
    signal: args.signal,
  });
  const meter = new CompletionStreamMeter(args.tokenizer);
  const stream = observeSseJson(
    response.body,
    (chunk: Completion) => {
      meter.observe(chunk);
      if (!clientWantsUsage && chunk.usage && chunk.choices?.length === 0) return false;
    },
    { modelAlias: { upstream: body.model, public: args.publicModel }, onDone: () => meter.markDone() },
  );
  return { body: stream, meter };
}
