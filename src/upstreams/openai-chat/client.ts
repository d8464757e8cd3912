// OpenAI chat completions over a channel: a whole answer, or the SSE stream passed through.
import { pipeline } from 'node:stream';
import type { Readable } from 'node:stream';
import { postJson } from '../http.js';
import type { Upstream } from '../pool.js';
import { createSseTap } from '../sse.js';
import type { ChatCompletion, ChatCompletionChunk, ChatRequest } from './types.js';
import { ChatStreamMeter } from './usage.js';

const authHeaders = (upstream: Upstream) =>
  upstream.channel.api_key ? { authorization: `Bearer ${upstream.channel.api_key}` } : undefined;

export async function createChatCompletion(
  upstream: Upstream,
  body: ChatRequest,
  signal: AbortSignal,
): Promise<ChatCompletion> {
  const response = await postJson(upstream, { path: '/v1/chat/completions', body: { ...body, stream: false }, headers: authHeaders(upstream), signal });
  return (await response.body.json()) as ChatCompletion;
}

export interface ChatStream {
  body: Readable;
  meter: ChatStreamMeter;
}

/**
 * Streams a completion. Usage is always asked of the upstream (billing needs it); the usage
 * chunk is passed on only when the client asked for it, as OpenAI itself would.
 */
export async function streamChatCompletion(
  upstream: Upstream,
  body: ChatRequest,
  signal: AbortSignal,
): Promise<ChatStream> {
  const clientWantsUsage = body.stream_options?.include_usage === true;
  const upstreamBody = { ...body, stream: true, stream_options: { ...body.stream_options, include_usage: true } };
  const response = await postJson(upstream, { path: '/v1/chat/completions', body: upstreamBody, headers: authHeaders(upstream), signal });
  const meter = new ChatStreamMeter();
  const tap = createSseTap(({ data }) => {
    if (data === '[DONE]' || !data.startsWith('{')) return;
    let chunk: ChatCompletionChunk;
    try {
      chunk = JSON.parse(data) as ChatCompletionChunk;
    } catch {
      return; // not ours to judge: the client gets the upstream's bytes as they were
    }
    meter.observe(chunk);
    if (!clientWantsUsage && chunk.usage && chunk.choices?.length === 0) return false;
  });
  // pipeline: an upstream that breaks destroys the tap, and the tap's error reaches the reader.
  pipeline(response.body, tap, () => {});
  return { body: tap, meter };
}
