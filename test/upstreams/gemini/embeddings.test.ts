// OpenAI embeddings requests written as Gemini's embedContent and batchEmbedContents, and their
// answers read back as OpenAI's.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  GEMINI_BATCH_LIMIT,
  geminiEmbedCalls,
  geminiEmbedTokens,
  geminiVectors,
  openAiEmbeddingsOf,
} from '../../../src/upstreams/gemini/embeddings-transform.js';
import { MalformedAnswerError } from '../../../src/upstreams/malformed.js';
import { floatsOfBase64 } from '../../../src/upstreams/openai-embeddings/encoding.js';

test('one input is one embedContent with its text as the content’s only part, and dimensions as outputDimensionality', () => {
  assert.deepEqual(geminiEmbedCalls(['a toll road'], 'models/gemini-embedding-001', 256), [
    { verb: 'embedContent', body: { content: { parts: [{ text: 'a toll road' }] }, outputDimensionality: 256 } },
  ]);
});

test('without dimensions no outputDimensionality is sent', () => {
  assert.deepEqual(geminiEmbedCalls(['x'], 'models/m', undefined)[0]?.body, { content: { parts: [{ text: 'x' }] } });
});

test('several inputs are one batchEmbedContents whose every request names the model’s resource', () => {
  assert.deepEqual(geminiEmbedCalls(['a', 'b'], 'models/m', undefined), [
    {
      verb: 'batchEmbedContents',
      body: {
        requests: [
          { model: 'models/m', content: { parts: [{ text: 'a' }] } },
          { model: 'models/m', content: { parts: [{ text: 'b' }] } },
        ],
      },
    },
  ]);
});

test('more inputs than a batch takes are split into batches of 100, in order', () => {
  const texts = Array.from({ length: 2 * GEMINI_BATCH_LIMIT + 5 }, (_, i) => `t${i}`);
  const calls = geminiEmbedCalls(texts, 'models/m', undefined);
  assert.deepEqual(
    calls.map((call) => (call.verb === 'batchEmbedContents' ? call.body.requests.length : 1)),
    [100, 100, 5],
  );
  const last = calls[2]!;
  assert.equal(last.verb === 'batchEmbedContents' && last.body.requests[0]?.content.parts[0]?.text, 't200');
});

test('the vectors are read from embedding.values or from each of embeddings', () => {
  const [one] = geminiEmbedCalls(['a'], 'models/m', undefined);
  assert.deepEqual(geminiVectors(one!, { embedding: { values: [0.5, -0.5] } }), [[0.5, -0.5]]);
  const [batch] = geminiEmbedCalls(['a', 'b'], 'models/m', undefined);
  assert.deepEqual(geminiVectors(batch!, { embeddings: [{ values: [1] }, { values: [2] }] }), [[1], [2]]);
});

test('an answer without a vector for each input is malformed', () => {
  const [batch] = geminiEmbedCalls(['a', 'b'], 'models/m', undefined);
  assert.throws(() => geminiVectors(batch!, { embeddings: [{ values: [1] }] }), MalformedAnswerError);
  assert.throws(() => geminiVectors(batch!, { embeddings: [{ values: [1] }, { values: 'x' }] }), MalformedAnswerError);
  const [one] = geminiEmbedCalls(['a'], 'models/m', undefined);
  assert.throws(() => geminiVectors(one!, {}), MalformedAnswerError);
});

test('usage is the sum of every answer’s promptTokenCount, and none when any answer lacks it', () => {
  assert.equal(geminiEmbedTokens([{ usageMetadata: { promptTokenCount: 3 } }, { usageMetadata: { promptTokenCount: 4 } }]), 7);
  assert.equal(geminiEmbedTokens([{ usageMetadata: { promptTokenCount: 3 } }, {}]), undefined);
  assert.equal(geminiEmbedTokens([{ embedding: { values: [1] } }]), undefined);
});

test('the OpenAI answer lists each vector with its index, the public model and the tokens billed', () => {
  assert.deepEqual(openAiEmbeddingsOf([[0.25], [0.5]], { model: 'public', format: undefined, promptTokens: 9 }), {
    object: 'list',
    data: [
      { object: 'embedding', index: 0, embedding: [0.25] },
      { object: 'embedding', index: 1, embedding: [0.5] },
    ],
    model: 'public',
    usage: { prompt_tokens: 9, total_tokens: 9 },
  });
});

test('base64 vectors decode to the float32 of each value', () => {
  const answer = openAiEmbeddingsOf([[0.1, -2, 3.5]], { model: 'm', format: 'base64', promptTokens: 1 });
  const encoded = answer.data[0]!.embedding as string;
  assert.equal(Buffer.from(encoded, 'base64').length, 12);
  assert.deepEqual(floatsOfBase64(encoded), [Math.fround(0.1), -2, 3.5]);
});
