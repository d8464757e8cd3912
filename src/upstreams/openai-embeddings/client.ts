// OpenAI embeddings over an OpenAI-style channel: OpenAI's `/v1/embeddings` with a bearer key, or
// Azure OpenAI's deployment path (or its v1 path) with `api-key` (openai-chat/endpoint.ts).
import { postForText } from '../http.js';
import { openAiAuthHeaders, openAiPath } from '../openai-chat/endpoint.js';
import type { Upstream } from '../pool.js';
import { parseEmbeddingsAnswer } from './answer.js';
import type { EmbeddingsAnswer, EmbeddingsRequest } from './input.js';

/** The upstream's answer, and the text it came in (passed on as it is when it can be). */
export async function createEmbeddings(upstream: Upstream, body: EmbeddingsRequest, signal: AbortSignal): Promise<{ answer: EmbeddingsAnswer; text: string }> {
  const text = await postForText(upstream, {
    path: openAiPath(upstream, 'embeddings', body.model),
    body,
    headers: openAiAuthHeaders(upstream),
    signal,
  });
  return { answer: parseEmbeddingsAnswer(text), text };
}
