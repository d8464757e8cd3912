// A rerank answer as the caller gets it, from any upstream's: sorted, cut to top_n, documents from
// the request, and the input tokens whichever way the upstream reports them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { publicRerank, reportedRerankTokens, rerankUnits } from '../../../src/upstreams/rerank/answer.js';

const request = (overrides = {}) => ({
  documents: ['a', { text: 'b', id: 7 }, 'c'],
  topN: undefined,
  returnDocuments: false,
  publicModel: 'public',
  id: 'rr-1',
  ...overrides,
});

test('results come out sorted by score, ties in document order, without the upstream’s documents', () => {
  const answer = {
    model: 'upstream',
    results: [
      { index: 2, relevance_score: 0.5, document: { text: 'c' } },
      { index: 0, relevance_score: 0.9 },
      { index: 1, relevance_score: 0.5 },
    ],
  };
  assert.deepEqual(publicRerank(answer, request()), {
    model: 'public',
    id: 'rr-1',
    results: [
      { index: 0, relevance_score: 0.9 },
      { index: 1, relevance_score: 0.5 },
      { index: 2, relevance_score: 0.5 },
    ],
  });
});

test('top_n cuts the results, and return_documents gives each its document as the caller sent it', () => {
  const answer = {
    id: 'up-1',
    results: [
      { index: 1, relevance_score: 0.2 },
      { index: 0, relevance_score: 0.8 },
      { index: 2, relevance_score: 0.1 },
    ],
  };
  const shown = publicRerank(answer, request({ topN: 2, returnDocuments: true })) as { id: string; results: unknown[] };
  assert.equal(shown.id, 'up-1');
  assert.deepEqual(shown.results, [
    { index: 0, relevance_score: 0.8, document: { text: 'a' } },
    { index: 1, relevance_score: 0.2, document: { text: 'b', id: 7 } },
  ]);
});

test('a result whose index names no document is dropped', () => {
  const answer = {
    results: [
      { index: 5, relevance_score: 1 },
      { index: -1, relevance_score: 1 },
      { index: 1, relevance_score: 0.3 },
    ],
  };
  assert.deepEqual((publicRerank(answer, request()) as { results: unknown[] }).results, [{ index: 1, relevance_score: 0.3 }]);
});

test('input tokens are read from Jina’s and vLLM’s usage or Cohere’s meta, and are absent when none is reported', () => {
  assert.equal(reportedRerankTokens({ results: [], usage: { total_tokens: 12 } }), 12);
  assert.equal(reportedRerankTokens({ results: [], usage: { prompt_tokens: 9 } }), 9);
  assert.equal(reportedRerankTokens({ results: [], meta: { billed_units: { search_units: 1, input_tokens: 40 } } }), 40);
  assert.equal(reportedRerankTokens({ results: [], meta: { billed_units: { search_units: 1 } } }), undefined);
  assert.equal(reportedRerankTokens({ results: [], usage: { total_tokens: 'many' } }), undefined);
});

test('a rerank is one call, with its tokens only where the model is priced on them (the gateway’s count when none is reported)', () => {
  assert.deepEqual(rerankUnits({ results: [], usage: { total_tokens: 12 } }, false, 30), { call: 1 });
  assert.deepEqual(rerankUnits({ results: [], usage: { total_tokens: 12 } }, true, 30), { call: 1, input_token: 12 });
  assert.deepEqual(rerankUnits({ results: [] }, true, 30), { call: 1, input_token: 30 });
});
