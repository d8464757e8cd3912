// An OpenAI-style upstream's embeddings answer as the caller gets it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { JsonText } from '../../../src/json-text.js';
import { MalformedAnswerError } from '../../../src/upstreams/malformed.js';
import { parseEmbeddingsAnswer, publicEmbeddings, reportedEmbeddingUnits } from '../../../src/upstreams/openai-embeddings/answer.js';
import { float32Base64, floatsOfBase64 } from '../../../src/upstreams/openai-embeddings/encoding.js';

const upstreamText = (embedding: unknown) =>
  JSON.stringify({
    object: 'list',
    data: [{ object: 'embedding', index: 0, embedding }],
    model: 'vendor-embed-v3',
    usage: { prompt_tokens: 5, total_tokens: 5 },
  });

test('an answer in the form asked for is passed on as its own text, only its model renamed', () => {
  const text = upstreamText([0.5, 0.25]);
  const body = publicEmbeddings(text, parseEmbeddingsAnswer(text), 'public-embed', undefined);
  assert.ok(body instanceof JsonText);
  assert.equal(body.text, text.replace('"vendor-embed-v3"', '"public-embed"'));
});

test('floats from an upstream that ignored encoding_format base64 are encoded for the caller', () => {
  const text = upstreamText([0.5, -1.5]);
  const body = publicEmbeddings(text, parseEmbeddingsAnswer(text), 'public-embed', 'base64') as any;
  assert.equal(body.model, 'public-embed');
  assert.deepEqual(floatsOfBase64(body.data[0].embedding), [0.5, -1.5]);
});

test('base64 from an upstream, when floats were asked for, is decoded', () => {
  const text = upstreamText(float32Base64([0.5, 2]));
  const body = publicEmbeddings(text, parseEmbeddingsAnswer(text), 'public-embed', 'float') as any;
  assert.deepEqual(body.data[0].embedding, [0.5, 2]);
});

test('the upstream’s prompt_tokens are the units billed; none reported, none read', () => {
  assert.deepEqual(reportedEmbeddingUnits(parseEmbeddingsAnswer(upstreamText([1]))), { input_token: 5 });
  assert.equal(reportedEmbeddingUnits(parseEmbeddingsAnswer('{"data":[]}')), undefined);
});

test('a body that is not JSON, or has no data list, is a malformed answer', () => {
  assert.throws(() => parseEmbeddingsAnswer('{"object":"li'), MalformedAnswerError);
  assert.throws(() => parseEmbeddingsAnswer('{"object":"list"}'), MalformedAnswerError);
});
