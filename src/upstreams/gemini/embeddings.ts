// OpenAI embeddings on a gemini channel (the Gemini API with its key, or Vertex AI with an OAuth
// token): translated to `:embedContent` or `:batchEmbedContents` calls and the vectors read back.
import type { Units } from '../../billing/prices.js';
import { invalidRequest } from '../../errors.js';
import type { CallArgs, MeteredAnswer, ResolvedModel } from '../../pipeline/types.js';
import { postForText } from '../http.js';
import { MalformedAnswerError } from '../malformed.js';
import { type EmbeddingInput, type EmbeddingsRequest, embeddingInputs } from '../openai-embeddings/input.js';
import {
  type GeminiEmbedCall,
  type GeminiEmbedResponse,
  geminiEmbedCalls,
  geminiEmbedTokens,
  geminiVectors,
  openAiEmbeddingsOf,
} from './embeddings-transform.js';
import { geminiAuthHeaders, geminiPath } from './endpoint.js';

/** The model's resource name, as a batch's requests name it: the Gemini API's, or Vertex AI's publisher model. */
function modelResource(model: ResolvedModel): string {
  const vertex = model.upstream.channel.vertex;
  if (!vertex) return `models/${model.upstreamModel}`;
  return `projects/${vertex.project}/locations/${vertex.region}/publishers/google/models/${model.upstreamModel}`;
}

async function embed(model: ResolvedModel, call: GeminiEmbedCall, headers: Record<string, string>, signal: AbortSignal): Promise<GeminiEmbedResponse> {
  const text = await postForText(model.upstream, { path: geminiPath(model.upstream, model.upstreamModel, call.verb), body: call.body, headers, signal });
  try {
    return JSON.parse(text) as GeminiEmbedResponse;
  } catch {
    throw new MalformedAnswerError(`the upstream answered ${call.verb} with a body that is not JSON`);
  }
}

/**
 * Every call at once; the first to fail stops the others (its error is the call's), and so does the
 * caller's signal.
 */
async function embedAll(model: ResolvedModel, calls: GeminiEmbedCall[], signal: AbortSignal): Promise<GeminiEmbedResponse[]> {
  const headers = await geminiAuthHeaders(model.upstream);
  if (calls.length === 1) return [await embed(model, calls[0]!, headers, signal)];
  const stop = new AbortController();
  const stopAll = () => stop.abort(signal.reason);
  signal.addEventListener('abort', stopAll, { once: true });
  try {
    return await Promise.all(
      calls.map((call) =>
        embed(model, call, headers, stop.signal).catch((error: unknown) => {
          stop.abort(error);
          throw error;
        }),
      ),
    );
  } finally {
    signal.removeEventListener('abort', stopAll);
  }
}

/**
 * The texts to embed; token ids are a 400 naming `input` (Gemini embeds text only), said by the
 * route's estimate before the hold, and again here should a failover land on a gemini channel.
 */
export function geminiTexts(input: EmbeddingInput, modelId: string): string[] {
  const inputs = embeddingInputs(input);
  if (inputs.kind === 'texts') return inputs.texts;
  throw invalidRequest(`input: token ids cannot be embedded by model ${modelId}, whose upstream takes text; send the text`);
}

export async function callGeminiEmbeddings({ body, model, estimate, signal }: CallArgs<EmbeddingsRequest>): Promise<MeteredAnswer> {
  const texts = geminiTexts(body.input, model.id);
  const calls = geminiEmbedCalls(texts, modelResource(model), body.dimensions);
  const responses = await embedAll(model, calls, signal);
  const vectors = calls.flatMap((call, i) => geminiVectors(call, responses[i]!));
  // The Gemini API reports no usage for embeddings: billed on the gateway's own count, as held.
  const counted = (): Units => ({ input_token: estimate.input_token ?? 0 });
  const reported = geminiEmbedTokens(responses);
  const units = reported === undefined ? counted() : { input_token: reported };
  const answer = openAiEmbeddingsOf(vectors, { model: model.id, format: body.encoding_format, promptTokens: units.input_token ?? 0 });
  return { kind: 'json', body: answer, units, counted };
}
