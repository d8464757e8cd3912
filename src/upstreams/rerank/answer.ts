// A rerank answer as the caller gets it, whatever the upstream (Cohere, Jina, vLLM): results sorted by
// relevance, highest first (ties in the documents' order), `top_n` at most, each with its document
// only when the request asked for them; the upstream's other fields (usage, meta) passed on.
import type { Units } from '../../billing/prices.js';
import type { RerankRequest } from './request.js';

export interface RerankResult {
  index: number;
  relevance_score: number;
  document?: unknown;
  [field: string]: unknown;
}

export interface RerankAnswer {
  id?: string;
  model?: string;
  results: RerankResult[];
  /** Jina's and vLLM's count. */
  usage?: { total_tokens?: unknown; prompt_tokens?: unknown } | null;
  /** Cohere's: billed search units, and on some models tokens. */
  meta?: {
    billed_units?: { total_tokens?: unknown; input_tokens?: unknown; search_units?: unknown } | null;
    tokens?: { input_tokens?: unknown } | null;
  } | null;
  [field: string]: unknown;
}

const isCount = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value) && value >= 0;

/** The input tokens the upstream reported, when it did: Jina's and vLLM's usage, or Cohere's meta. */
export function reportedRerankTokens(answer: RerankAnswer): number | undefined {
  const candidates = [
    answer.usage?.total_tokens,
    answer.usage?.prompt_tokens,
    answer.meta?.billed_units?.input_tokens,
    answer.meta?.billed_units?.total_tokens,
    answer.meta?.tokens?.input_tokens,
  ];
  return candidates.find(isCount);
}

/** The units a rerank is billed: one call, and its input tokens where the model is priced on them. */
export function rerankUnits(answer: RerankAnswer, pricedOnTokens: boolean, countedTokens: number): Units {
  if (!pricedOnTokens) return { call: 1 };
  return { call: 1, input_token: reportedRerankTokens(answer) ?? countedTokens };
}

export function publicRerank(
  answer: RerankAnswer,
  /** `documents` as the caller sent them: a result's document is the caller's own (a string as `{text}`). */
  request: { documents: RerankRequest['documents']; topN: number | undefined; returnDocuments: boolean; publicModel: string; id: string },
): unknown {
  const results = answer.results
    .filter((result) => Number.isInteger(result?.index) && result.index >= 0 && result.index < request.documents.length)
    .sort((a, b) => (Number(b.relevance_score) || 0) - (Number(a.relevance_score) || 0) || a.index - b.index)
    .slice(0, request.topN ?? request.documents.length)
    .map(({ document: _document, ...result }) => (request.returnDocuments ? { ...result, document: asDocument(request.documents[result.index]!) } : result));
  return { ...answer, id: answer.id ?? request.id, model: request.publicModel, results };
}

const asDocument = (document: RerankRequest['documents'][number]) => (typeof document === 'string' ? { text: document } : document);
