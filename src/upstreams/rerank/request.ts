// A rerank request as the caller sends it (Cohere's and Jina's shape): the query, and documents that
// are strings or objects with a `text`. Checked before the schema, for messages naming the document.
import { invalidRequest } from '../../errors.js';

export const MAX_RERANK_DOCUMENTS = 1_000;

export interface RerankRequest {
  model: string;
  query: string;
  documents: (string | { text: string; [field: string]: unknown })[];
  top_n?: number | null;
  return_documents?: boolean | null;
  [field: string]: unknown;
}

/** Throws a 400 naming `documents` (or the document at fault) unless each is a string or has a string `text`. */
export function requireRerankDocuments(documents: unknown): void {
  if (!Array.isArray(documents) || documents.length === 0) throw invalidRequest('documents: required, a non-empty array of strings or of objects with a text');
  if (documents.length > MAX_RERANK_DOCUMENTS) throw invalidRequest(`documents: at most ${MAX_RERANK_DOCUMENTS}, got ${documents.length}`);
  documents.forEach((document, index) => {
    const text = typeof document === 'object' && document !== null ? (document as { text?: unknown }).text : document;
    if (typeof text !== 'string') throw invalidRequest(`documents[${index}]: expected a string or an object with a string text`);
  });
}

/** Each document's text. */
export const documentTexts = (body: RerankRequest): string[] => body.documents.map((document) => (typeof document === 'string' ? document : document.text));
