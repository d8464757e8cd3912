// An OpenAI-style embeddings answer as the caller gets it: the upstream's own text with the public
// model id, rebuilt only when the text cannot be changed in place or when the upstream wrote its
// vectors in another form than the caller asked for (some OpenAI-compatible hosts ignore
// `encoding_format`, and the openai SDKs decode the base64 they ask for by default).
import type { Units } from '../../billing/prices.js';
import { MalformedAnswerError } from '../malformed.js';
import { withPublicModel } from '../public-model.js';
import { encodedVector, floatsOfBase64 } from './encoding.js';
import type { EmbeddingsAnswer } from './input.js';

/** The upstream's text read as an embeddings answer; not one (no `data` list), a malformed answer. */
export function parseEmbeddingsAnswer(text: string): EmbeddingsAnswer {
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    throw new MalformedAnswerError('the upstream answered embeddings with a body that is not JSON');
  }
  if (typeof answer !== 'object' || answer === null || !Array.isArray((answer as EmbeddingsAnswer).data)) {
    throw new MalformedAnswerError('the upstream answered embeddings without a data list');
  }
  return answer as EmbeddingsAnswer;
}

/** The input tokens the upstream reported, when it did. */
export function reportedEmbeddingUnits(answer: EmbeddingsAnswer): Units | undefined {
  const tokens = answer.usage?.prompt_tokens;
  return typeof tokens === 'number' ? { input_token: tokens } : undefined;
}

const inForm = (embedding: unknown, format: 'float' | 'base64' | undefined) => (format === 'base64' ? typeof embedding === 'string' : Array.isArray(embedding));

/** The answer the caller gets: `model` the public id, every vector in the form asked for. */
export function publicEmbeddings(text: string, answer: EmbeddingsAnswer, publicModel: string, format: 'float' | 'base64' | undefined): unknown {
  if (answer.data.every((item) => inForm(item?.embedding, format))) return withPublicModel(text, answer, publicModel);
  const data = answer.data.map((item) => {
    const embedding = item?.embedding;
    const values = typeof embedding === 'string' ? floatsOfBase64(embedding) : Array.isArray(embedding) ? embedding : [];
    return { ...item, embedding: encodedVector(values, format) };
  });
  return { ...answer, data, model: publicModel };
}
