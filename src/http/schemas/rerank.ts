// POST /v1/rerank: Cohere's and Jina's rerank request. The documents are checked in the route first
// (upstreams/rerank/request.ts); the schema states their forms for the document.
import { MAX_RERANK_DOCUMENTS } from '../../upstreams/rerank/request.js';
import { METERED_ERRORS } from './errors.js';
import { headers, IdempotencyKeyHeader } from './headers.js';

export const RerankBody = {
  type: 'object',
  description: 'A rerank request in Cohere’s and Jina’s shape; fields not named here go to the upstream as sent.',
  required: ['model', 'query', 'documents'],
  properties: {
    model: { type: 'string', minLength: 1, description: 'A rerank model of GET /v1/models.' },
    query: { type: 'string', minLength: 1, description: 'What the documents are ranked against.' },
    documents: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_RERANK_DOCUMENTS,
      description: 'The documents to rank: strings, or objects with a `text` (sent upstream as their text).',
      items: { anyOf: [{ type: 'string' }, { type: 'object', required: ['text'], properties: { text: { type: 'string' } } }] },
    },
    top_n: { type: ['integer', 'null'], minimum: 1, description: 'The most results to return (the best ones); all by default.' },
    return_documents: {
      type: ['boolean', 'null'],
      description: 'true: each result carries its document as sent (a string as `{text}`); by default it does not.',
    },
  },
} as const;

/** Documented only (built from the upstream's results). */
const RerankAnswer = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    model: { type: 'string', description: 'The public model id that was asked for.' },
    results: {
      type: 'array',
      description: 'Sorted by relevance_score, highest first; ties in the order of `documents`; `top_n` at most.',
      items: {
        type: 'object',
        properties: {
          index: { type: 'integer', description: 'The document’s place in `documents`.' },
          relevance_score: { type: 'number' },
          document: { description: 'With return_documents: the document as sent, a string as `{text}`.' },
        },
      },
    },
    usage: { type: 'object', description: 'The upstream’s token count, when it reports one (Jina, vLLM).', properties: { total_tokens: { type: 'integer' } } },
  },
} as const;

export const RerankSchema = {
  tags: ['rerank'],
  summary: 'Ranks documents by relevance to a query (Cohere and Jina format).',
  description:
    'Routed by `model`. Billed one call at the model’s price per call; a model priced per input token is held for the query and the documents as the gateway counts them, then settled on the upstream’s count. A failure costs nothing.',
  body: RerankBody,
  docsOnly: { headers: headers(IdempotencyKeyHeader) },
  response: {
    200: { description: 'The ranked results.', content: { 'application/json': { schema: RerankAnswer } } },
    ...METERED_ERRORS,
  },
};
