// OpenAI moderations over an OpenAI-style channel (`POST /v1/moderations`, bearer key): the answer
// passed on as the upstream wrote it, with the public model id.
import { postForText } from '../http.js';
import { MalformedAnswerError } from '../malformed.js';
import { openAiAuthHeaders, openAiPath } from '../openai-chat/endpoint.js';
import type { Upstream } from '../pool.js';

export interface ModerationRequest {
  model: string;
  /** A string, strings, or an array of `{type: "text"}` and `{type: "image_url"}` items. */
  input: unknown;
  [field: string]: unknown;
}

export interface ModerationAnswer {
  id?: string;
  model?: string;
  results: unknown[];
  [field: string]: unknown;
}

/** The upstream's answer, and the text it came in; an answer without a results list is malformed. */
export async function createModeration(upstream: Upstream, body: ModerationRequest, signal: AbortSignal): Promise<{ answer: ModerationAnswer; text: string }> {
  const text = await postForText(upstream, { path: openAiPath(upstream, 'moderations', body.model), body, headers: openAiAuthHeaders(upstream), signal });
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    throw new MalformedAnswerError('the upstream answered moderations with a body that is not JSON');
  }
  if (typeof answer !== 'object' || answer === null || !Array.isArray((answer as ModerationAnswer).results)) {
    throw new MalformedAnswerError('the upstream answered moderations without a results list');
  }
  return { answer: answer as ModerationAnswer, text };
}
