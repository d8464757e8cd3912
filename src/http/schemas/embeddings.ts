// POST /v1/embeddings: OpenAI's embeddings request. The four forms of `input` are checked in the
// route first (upstreams/openai-embeddings/input.ts), for messages that say which element is at
// fault; the schema states them for the document. Fields not named here go upstream as sent.
import { MAX_EMBEDDING_INPUTS } from '../../upstreams/openai-embeddings/input.js';
import { METERED_ERRORS } from './errors.js';
import { headers, IdempotencyKeyHeader } from './headers.js';

const tokenIds = { type: 'array', minItems: 1, maxItems: MAX_EMBEDDING_INPUTS, items: { type: 'integer', minimum: 0 } } as const;

export const EmbeddingsBody = {
  type: 'object',
  description: 'An OpenAI embeddings request; fields not named here go to OpenAI-style upstreams as sent.',
  required: ['model', 'input'],
  properties: {
    model: { type: 'string', minLength: 1, description: 'An embedding model of GET /v1/models.' },
    input: {
      description: `What to embed: a string, an array of strings, an array of token ids, or an array of token-id arrays; at most ${MAX_EMBEDDING_INPUTS} inputs, none empty. All of it counts towards the hold. Token ids are refused by models served by Gemini.`,
      anyOf: [
        { type: 'string', minLength: 1 },
        { type: 'array', minItems: 1, maxItems: MAX_EMBEDDING_INPUTS, items: { type: 'string', minLength: 1 } },
        tokenIds,
        { type: 'array', minItems: 1, maxItems: MAX_EMBEDDING_INPUTS, items: tokenIds },
      ],
    },
    encoding_format: {
      type: 'string',
      enum: ['float', 'base64'],
      description: 'float (the default): lists of numbers; base64: each vector as the base64 of its little-endian float32 array.',
    },
    dimensions: { type: 'integer', minimum: 1, description: 'The length of each vector, for models that can shorten theirs.' },
    user: { type: 'string', description: 'The caller’s end user, passed to OpenAI-style upstreams.' },
  },
} as const;

/** Documented only (the answer is the upstream's, or built from a translated one). */
const EmbeddingsAnswer = {
  type: 'object',
  properties: {
    object: { type: 'string', enum: ['list'] },
    data: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          object: { type: 'string', enum: ['embedding'] },
          index: { type: 'integer', description: 'The input’s place in `input`.' },
          embedding: {
            description: 'The vector: numbers, or with encoding_format base64 a base64 string.',
            anyOf: [{ type: 'array', items: { type: 'number' } }, { type: 'string' }],
          },
        },
      },
    },
    model: { type: 'string', description: 'The public model id that was asked for.' },
    usage: {
      type: 'object',
      description: 'What the call is billed on: the upstream’s count, or the gateway’s when the upstream reports none.',
      properties: { prompt_tokens: { type: 'integer' }, total_tokens: { type: 'integer' } },
    },
  },
} as const;

export const EmbeddingsSchema = {
  tags: ['embeddings'],
  summary: 'Embedding vectors of texts or token ids (OpenAI format).',
  description:
    'Routed by `model`. Funds for the input, counted with the model’s tokenizer, are held first, then settled on the upstream’s `usage.prompt_tokens` (the gateway’s count when it reports none); an upstream failure costs nothing.',
  body: EmbeddingsBody,
  docsOnly: { headers: headers(IdempotencyKeyHeader) },
  response: {
    200: { description: 'One vector per input, in the order of `input`.', content: { 'application/json': { schema: EmbeddingsAnswer } } },
    ...METERED_ERRORS,
  },
};
