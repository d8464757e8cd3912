// Rerank in Cohere's and Jina's shape (`POST /v1/rerank`): a document's relevance is the share of the
// query's distinct words it holds (case and punctuation aside), ties kept in the documents' order.
// Results sorted by relevance, `top_n` at most; each with its document unless `return_documents` is
// false (Jina's default). Usage, as Jina reports it: the words of the query and of every document.
import { hasBearer, openAiError, openAiErrorForStatus, UNAUTHORIZED } from './openai-common.js';
import type { SandboxContext, SandboxRoute } from './route.js';
import { hashOf, isRecord, words } from './text.js';

const MAX_DOCUMENTS = 1_000;

const normalWords = (text: string) =>
  words(text.toLowerCase())
    .map((word) => word.replace(/[^\p{L}\p{N}]/gu, ''))
    .filter((word) => word !== '');

/** A document's text: the string, or an object's `text`. */
const documentText = (document: unknown): string | undefined =>
  typeof document === 'string' ? document : isRecord(document) && typeof document.text === 'string' ? document.text : undefined;

/** The share of the query's distinct words the document holds, to four places. */
export function relevance(query: string, document: string): number {
  const wanted = new Set(normalWords(query));
  if (wanted.size === 0) return 0;
  const held = new Set(normalWords(document));
  let overlap = 0;
  for (const word of wanted) if (held.has(word)) overlap += 1;
  return Math.round((overlap / wanted.size) * 10_000) / 10_000;
}

export const rerankRoute: SandboxRoute = {
  kind: 'rerank',
  method: 'POST',
  path: '/v1/rerank',
  errorBody: openAiErrorForStatus,
  handle(ctx: SandboxContext) {
    const refuse = (message: string) => ctx.reply.json(400, openAiError(message, 'invalid_request_error'));
    if (!hasBearer(ctx.headers)) return ctx.reply.json(401, UNAUTHORIZED);
    const body = ctx.body;
    if (!isRecord(body)) return refuse('body: expected a JSON object');
    const { model, query, documents, top_n: topN, return_documents: returnDocuments } = body;
    if (typeof model !== 'string' || model === '') return refuse('model: required, a non-empty string');
    if (typeof query !== 'string' || query === '') return refuse('query: required, a non-empty string');
    if (!Array.isArray(documents) || documents.length === 0 || documents.length > MAX_DOCUMENTS) {
      return refuse(`documents: expected from 1 to ${MAX_DOCUMENTS} documents`);
    }
    const texts = documents.map(documentText);
    const bad = texts.indexOf(undefined);
    if (bad !== -1) return refuse(`documents[${bad}]: expected a string or an object with a text`);
    if (topN !== undefined && topN !== null && (!Number.isSafeInteger(topN) || (topN as number) < 1)) return refuse('top_n: expected a positive integer');
    const ranked = (texts as string[])
      .map((text, index) => ({ index, text, relevance_score: relevance(query, text) }))
      .sort((a, b) => b.relevance_score - a.relevance_score || a.index - b.index)
      .slice(0, (topN as number | undefined | null) ?? texts.length);
    const results = ranked.map(({ index, text, relevance_score }) =>
      returnDocuments === false ? { index, relevance_score } : { index, document: { text }, relevance_score },
    );
    const totalTokens = words(query).length + (texts as string[]).reduce((sum, text) => sum + words(text).length, 0);
    const hash = hashOf(body);
    ctx.reply.json(200, { id: `rerank-${hash}`, model, usage: { total_tokens: totalTokens }, results }, { 'x-request-id': `req_${hash}` });
  },
};
