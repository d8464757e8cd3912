// OpenAI's embeddings request written as Gemini's, and Gemini's answers read back as OpenAI's. One
// input is one `:embedContent`; several are `:batchEmbedContents` calls of at most 100 inputs each
// (Gemini refuses larger batches), each request naming the model. Gemini embeds text only:
// token-id inputs are refused before anything is held.
import { MalformedAnswerError } from '../malformed.js';
import { encodedVector } from '../openai-embeddings/encoding.js';
import type { EmbeddingsAnswer } from '../openai-embeddings/input.js';

export interface GeminiEmbedRequest {
  /** In a batch only: the model's resource name (`models/{model}` on the Gemini API), the model of the call's path. */
  model?: string;
  content: { parts: { text: string }[] };
  outputDimensionality?: number;
}

export type GeminiEmbedCall = { verb: 'embedContent'; body: GeminiEmbedRequest } | { verb: 'batchEmbedContents'; body: { requests: GeminiEmbedRequest[] } };

interface ContentEmbedding {
  values?: unknown;
}

/** What either verb answers: `embedding` for one, `embeddings` for a batch; Vertex AI adds usage. */
export interface GeminiEmbedResponse {
  embedding?: ContentEmbedding;
  embeddings?: ContentEmbedding[];
  usageMetadata?: { promptTokenCount?: unknown };
}

/** The most requests one `:batchEmbedContents` may carry. */
export const GEMINI_BATCH_LIMIT = 100;

/** The calls that embed `texts`, in their order; `resource`: the model's resource name, which each request of a batch names. */
export function geminiEmbedCalls(texts: readonly string[], resource: string, dimensions: number | undefined): GeminiEmbedCall[] {
  const request = (text: string): GeminiEmbedRequest => ({
    content: { parts: [{ text }] },
    ...(dimensions !== undefined && { outputDimensionality: dimensions }),
  });
  if (texts.length === 1) return [{ verb: 'embedContent', body: request(texts[0]!) }];
  const calls: GeminiEmbedCall[] = [];
  for (let at = 0; at < texts.length; at += GEMINI_BATCH_LIMIT) {
    const batch = texts.slice(at, at + GEMINI_BATCH_LIMIT);
    calls.push({ verb: 'batchEmbedContents', body: { requests: batch.map((text) => ({ model: resource, ...request(text) })) } });
  }
  return calls;
}

/** How many inputs a call embeds. */
export const inputsOf = (call: GeminiEmbedCall) => (call.verb === 'embedContent' ? 1 : call.body.requests.length);

const isVector = (values: unknown): values is number[] => Array.isArray(values) && values.every((value) => typeof value === 'number');

/** The vectors of a call's answer, in the order of its inputs; an answer without them (or with too few) is malformed. */
export function geminiVectors(call: GeminiEmbedCall, response: GeminiEmbedResponse): number[][] {
  const inputs = inputsOf(call);
  const embeddings = call.verb === 'embedContent' ? [response?.embedding] : response?.embeddings;
  if (!Array.isArray(embeddings) || embeddings.length !== inputs) {
    throw new MalformedAnswerError(`the upstream answered ${call.verb} without an embedding for each of the ${inputs} inputs`);
  }
  return embeddings.map((embedding, i) => {
    if (!isVector(embedding?.values)) throw new MalformedAnswerError(`the upstream answered ${call.verb} without the values of embedding ${i}`);
    return embedding.values;
  });
}

/** The input tokens the upstream reported for every call (Vertex AI does; the Gemini API reports none for embeddings). */
export function geminiEmbedTokens(responses: readonly GeminiEmbedResponse[]): number | undefined {
  let total = 0;
  for (const response of responses) {
    const tokens = response?.usageMetadata?.promptTokenCount;
    if (typeof tokens !== 'number') return undefined;
    total += tokens;
  }
  return total;
}

/** OpenAI's answer: the vectors in the form asked for, the public model, and the tokens billed. */
export function openAiEmbeddingsOf(
  vectors: number[][],
  args: { model: string; format: 'float' | 'base64' | undefined; promptTokens: number },
): EmbeddingsAnswer {
  return {
    object: 'list',
    data: vectors.map((values, index) => ({ object: 'embedding', index, embedding: encodedVector(values, args.format) })),
    model: args.model,
    usage: { prompt_tokens: args.promptTokens, total_tokens: args.promptTokens },
  };
}
