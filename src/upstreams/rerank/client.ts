// Rerank in Cohere's and Jina's shape (`POST /v1/rerank` with a bearer key), which Jina, vLLM and
// most OpenAI-compatible hosts serve: the query and the documents' texts go up, the scored results
// come back.
import { postForText } from '../http.js';
import { MalformedAnswerError } from '../malformed.js';
import { openAiAuthHeaders, openAiPath } from '../openai-chat/endpoint.js';
import type { Upstream } from '../pool.js';
import type { RerankAnswer } from './answer.js';

export interface UpstreamRerankRequest {
  model: string;
  query: string;
  /** The documents' texts: the form every rerank API takes (Cohere's v2 takes no objects). */
  documents: string[];
  [field: string]: unknown;
}

export async function rerank(upstream: Upstream, body: UpstreamRerankRequest, signal: AbortSignal): Promise<RerankAnswer> {
  const text = await postForText(upstream, { path: openAiPath(upstream, 'rerank', body.model), body, headers: openAiAuthHeaders(upstream), signal });
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    throw new MalformedAnswerError('the upstream answered rerank with a body that is not JSON');
  }
  if (typeof answer !== 'object' || answer === null || !Array.isArray((answer as RerankAnswer).results)) {
    throw new MalformedAnswerError('the upstream answered rerank without a results list');
  }
  return answer as RerankAnswer;
}
