// OpenAI chat completions over a channel: a whole answer, or the SSE stream passed through.
import type { Readable } from 'node:stream';
import type { TokenizerName } from '../../billing/tokens.js';
import { withFields } from '../../with-fields.js';
import { postForText, postJson } from '../http.js';
import type { Upstream } from '../pool.js';
import { observeSseJson } from '../sse.js';
import { openAiAuthHeaders, openAiPath } from './endpoint.js';
import type { ChatCompletion, ChatCompletionChunk, ChatRequest } from './types.js';
import { ChatStreamMeter } from './usage.js';

export async function createChatCompletion(upstream: Upstream, body: ChatRequest, signal: AbortSignal): Promise<ChatCompletion> {
  return (await chatCompletionWithText(upstream, body, signal)).completion;
}

/** A whole completion, and the text it came in (which a caller may pass on as it is). */
export async function chatCompletionWithText(
  upstream: Upstream,
  body: ChatRequest,
  signal: AbortSignal,
): Promise<{ completion: ChatCompletion; text: string }> {
  // (a body that says stream: false already is sent as it is, not copied once more)
  const upstreamBody = body.stream === false ? body : withFields(body, { stream: false });
  const text = await postForText(upstream, {
    path: openAiPath(upstream, 'chat/completions', body.model),
    body: upstreamBody,
    headers: openAiAuthHeaders(upstream),
    signal,
  });
  return { completion: JSON.parse(text) as ChatCompletion, text };
}

export interface ChatStream {
  body: Readable;
  meter: ChatStreamMeter;
}

/** Opens a completion stream, always asking the upstream for usage (billing needs it). */
export async function openChatStream(upstream: Upstream, body: ChatRequest, signal: AbortSignal): Promise<Readable> {
  const upstreamBody = withFields(body, { stream: true, stream_options: withFields(body.stream_options ?? {}, { include_usage: true }) });
  const response = await postJson(upstream, {
    path: openAiPath(upstream, 'chat/completions', body.model),
    body: upstreamBody,
    headers: openAiAuthHeaders(upstream),
    signal,
  });
  return response.body;
}

/** Streams a completion through; the usage chunk reaches the client only when it asked for it, as OpenAI itself would. */
export async function streamChatCompletion(
  upstream: Upstream,
  body: ChatRequest,
  args: { signal: AbortSignal; publicModel: string; tokenizer: TokenizerName },
): Promise<ChatStream> {
  const clientWantsUsage = body.stream_options?.include_usage === true;
  const meter = new ChatStreamMeter(args.tokenizer);
  const stream = observeSseJson(
    await openChatStream(upstream, body, args.signal),
    (chunk: ChatCompletionChunk) => {
      meter.observe(chunk);
      if (!clientWantsUsage && chunk.usage && chunk.choices?.length === 0) return false;
    },
    {
      modelAlias: { upstream: body.model, public: args.publicModel },
      onDone: () => meter.markDone(),
      // A text-only chunk: what observe would take from it, without parsing it.
      skim: (bytes, from, to) => meter.skim(bytes, from, to),
    },
  );
  return { body: stream, meter };
}
