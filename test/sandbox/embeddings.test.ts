// The sandbox's embeddings: OpenAI's /v1/embeddings, Azure's deployment path and the Gemini API's
// embedContent and batchEmbedContents, called with plain fetch.
import assert from 'node:assert/strict';
import { after, afterEach, before, test } from 'node:test';
import { embeddingVector } from '../../src/sandbox/embeddings.js';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.js';
import { AUTH, addFault, clearSandbox, postTo } from './sandbox-client.js';

let sandbox: Sandbox;
before(async () => {
  sandbox = await startSandbox({ port: 0 });
});
afterEach(() => clearSandbox(sandbox.url));
after(() => sandbox.close());

const openAi = (body: unknown, headers: Record<string, string> = AUTH) => postTo(`${sandbox.url}/v1/embeddings`, body, headers);
const GEMINI_KEY = { 'x-goog-api-key': 'k', 'content-type': 'application/json' };
const gemini = (call: string, body: unknown) => postTo(`${sandbox.url}/v1beta/models/${call}`, body, GEMINI_KEY);
const floatsOf = (base64: string) => {
  const bytes = Buffer.from(base64, 'base64');
  return Array.from({ length: bytes.length / 4 }, (_, i) => bytes.readFloatLE(i * 4));
};
const length = (vector: number[]) => Math.sqrt(vector.reduce((sum, v) => sum + v * v, 0));

test('the same input text gets the same unit vector of 1536 floats, another text another vector', async () => {
  const first = await openAi({ model: 'm', input: 'toll road' });
  const again = await openAi({ model: 'm', input: ['toll road', 'a bridge'] });
  assert.equal(first.status, 200);
  const vector = first.body.data[0].embedding;
  assert.equal(vector.length, 1536);
  assert.ok(Math.abs(length(vector) - 1) < 1e-5);
  assert.deepEqual(again.body.data[0].embedding, vector);
  assert.notDeepEqual(again.body.data[1].embedding, vector);
  assert.deepEqual(vector, embeddingVector('toll road', 1536));
});

test('the answer is an OpenAI list with each input’s index, the model asked for and the words as prompt tokens', async () => {
  const { body } = await openAi({ model: 'text-embedding-3-small', input: ['one two three', 'four'], dimensions: 4 });
  assert.deepEqual(
    { ...body, data: body.data.map((d: any) => ({ ...d, embedding: d.embedding.length })) },
    {
      object: 'list',
      data: [
        { object: 'embedding', index: 0, embedding: 4 },
        { object: 'embedding', index: 1, embedding: 4 },
      ],
      model: 'text-embedding-3-small',
      usage: { prompt_tokens: 4, total_tokens: 4 },
    },
  );
});

test('dimensions sets the vector’s length, still of unit length', async () => {
  const { body } = await openAi({ model: 'm', input: 'short', dimensions: 8 });
  assert.equal(body.data[0].embedding.length, 8);
  assert.ok(Math.abs(length(body.data[0].embedding) - 1) < 1e-5);
});

test('base64 is the little-endian float32 bytes of the very floats the float form gives', async () => {
  const floats = await openAi({ model: 'm', input: 'same text', encoding_format: 'float' });
  const base64 = await openAi({ model: 'm', input: 'same text', encoding_format: 'base64' });
  assert.equal(typeof base64.body.data[0].embedding, 'string');
  assert.deepEqual(floatsOf(base64.body.data[0].embedding), floats.body.data[0].embedding);
});

test('token-id inputs are embedded and count one token each', async () => {
  const { status, body } = await openAi({ model: 'm', input: [[1, 2, 3], [4]] });
  assert.equal(status, 200);
  assert.equal(body.data.length, 2);
  assert.deepEqual(body.usage, { prompt_tokens: 4, total_tokens: 4 });
});

test('OpenAI’s path needs a bearer key and refuses an empty input', async () => {
  assert.equal((await openAi({ model: 'm', input: 'x' }, { 'content-type': 'application/json' })).status, 401);
  for (const input of ['', [], ['a', '']]) {
    const { status, body } = await openAi({ model: 'm', input });
    assert.equal(status, 400, JSON.stringify(input));
    assert.match(body.error.message, /input/);
  }
});

test('Azure’s deployment path answers with the deployment as the model, with api-key and api-version', async () => {
  const url = `${sandbox.url}/openai/deployments/embed-deploy/embeddings?api-version=2024-10-21`;
  const { status, body } = await postTo(url, { input: 'azure text' }, { 'api-key': 'k', 'content-type': 'application/json' });
  assert.equal(status, 200);
  assert.equal(body.model, 'embed-deploy');
  assert.deepEqual(body.data[0].embedding, embeddingVector('azure text', 1536));
  assert.equal((await postTo(url, { input: 'x' }, AUTH)).status, 401);
});

test('Gemini’s embedContent answers one vector of 768 values, or outputDimensionality', async () => {
  const one = await gemini('e:embedContent', { content: { parts: [{ text: 'toll road' }] } });
  assert.equal(one.status, 200);
  assert.deepEqual(one.body, { embedding: { values: embeddingVector('toll road', 768) } });
  const short = await gemini('e:embedContent', { content: { parts: [{ text: 'toll road' }] }, outputDimensionality: 3 });
  assert.equal(short.body.embedding.values.length, 3);
});

test('Gemini’s batchEmbedContents answers each request in order and needs the call’s model in each', async () => {
  const request = (text: string) => ({ model: 'models/e', content: { parts: [{ text }] } });
  const { status, body } = await gemini('e:batchEmbedContents', { requests: [request('a'), request('b')] });
  assert.equal(status, 200);
  assert.deepEqual(
    body.embeddings.map((e: any) => e.values),
    [embeddingVector('a', 768), embeddingVector('b', 768)],
  );
  const wrongModel = await gemini('e:batchEmbedContents', { requests: [{ ...request('a'), model: 'models/other' }] });
  assert.equal(wrongModel.status, 400);
  const tooMany = await gemini('e:batchEmbedContents', { requests: Array.from({ length: 101 }, () => request('a')) });
  assert.deepEqual([tooMany.status, tooMany.body.error.status], [400, 'INVALID_ARGUMENT']);
});

test('Gemini’s embedding verbs need the key, and its other verbs are answered as before', async () => {
  const noKey = await postTo(`${sandbox.url}/v1beta/models/e:embedContent`, { content: { parts: [{ text: 'x' }] } }, { 'content-type': 'application/json' });
  assert.equal(noKey.status, 401);
  const chat = await gemini('g:generateContent', { contents: [{ role: 'user', parts: [{ text: 'hello' }] }] });
  assert.equal(chat.status, 200);
});

test('a fault of kind embeddings fails OpenAI’s embeddings call', async () => {
  await addFault(sandbox.url, { kind: 'embeddings', status: 500, times: 1 });
  assert.equal((await openAi({ model: 'm', input: 'x' })).status, 500);
  assert.equal((await openAi({ model: 'm', input: 'x' })).status, 200);
});
