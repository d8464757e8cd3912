// POST /v1/embeddings end to end: the official openai client → gateway → the sandbox's OpenAI,
// Azure and Gemini embeddings, billed on the input tokens (100 000 micros a million: a tenth of a
// micro a token, rounded up per call).
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import OpenAI from 'openai';
import { request } from 'undici';
import { countTokens } from '../../src/billing/tokens.js';
import { sandboxCatalogue } from '../../src/config/sandbox-catalogue.js';
import { embeddingVector } from '../../src/sandbox/embeddings.js';
import { eventually, startTestGateway, type TestGateway } from '../helpers/gateway.js';

const CREDIT = 1_000_000;
const PRICE_PER_MILLION = 100_000;
const bill = (tokens: number) => Math.ceil((tokens * PRICE_PER_MILLION) / 1_000_000);
/** Enough words that the bill is more than a micro. */
const TEXT = 'the gateway holds funds before each call and settles them on what was used '.repeat(3).trim();
const WORDS = TEXT.split(' ').length;

describe('embeddings', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway((sandboxUrl) => ({
      test_mode: { sandbox_url: sandboxUrl },
      // an embedding model on the Vertex AI channel too
      models: {
        ...sandboxCatalogue(sandboxUrl).models,
        'vertex-embedding': { type: 'embedding', channel: 'sandbox-vertex', upstream_model: 'text-embedding-005', price: { input_token: PRICE_PER_MILLION } },
      },
    }));
  });
  after(() => gw.close());
  beforeEach(async () => {
    await gw.sandboxControl('DELETE', '/__sandbox/faults');
    await gw.sandboxControl('DELETE', '/__sandbox/requests');
  });

  const client = (key: string) => new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  const sent = async () => (await gw.sandboxControl('GET', '/__sandbox/requests')).data as any[];
  const ledgerKinds = async (accountId: string) => (await gw.admin('GET', `/admin/accounts/${accountId}/ledger`)).body.data.map((row: any) => row.kind);
  const usageRows = async (accountId: string) => (await gw.admin('GET', `/admin/accounts/${accountId}/usage`)).body.data as any[];
  /** What a float32 round trip makes of the sandbox's vector (the SDK decodes base64 to exactly these). */
  const vectorOf = (text: string, dimensions: number) => embeddingVector(text, dimensions);

  test('the SDK’s default call (base64, decoded by the SDK) gets the sandbox’s vector and is billed on the upstream’s tokens', async () => {
    const { accountId, key } = await gw.account({ creditMicros: CREDIT });
    const answer = await client(key).embeddings.create({ model: 'sandbox-embedding', input: TEXT });
    assert.equal((await sent())[0].body.encoding_format, 'base64', 'the SDK asks for base64 by default');
    assert.deepEqual(answer.data[0]?.embedding, vectorOf(TEXT, 1536));
    assert.equal(answer.model, 'sandbox-embedding');
    assert.deepEqual(answer.usage, { prompt_tokens: WORDS, total_tokens: WORDS });
    assert.deepEqual(await gw.settled(accountId), { ...(await gw.balance(accountId)), balance_micros: CREDIT - bill(WORDS), held_micros: 0 });
    assert.deepEqual(await ledgerKinds(accountId), ['settle', 'hold', 'credit']);
    const [usage] = await usageRows(accountId);
    assert.deepEqual([usage.endpoint, usage.units, usage.amount_micros], ['embeddings', { input_token: WORDS }, bill(WORDS)]);
  });

  test('an array of strings with dimensions and float gets one vector per input, in order, the channel’s model upstream', async () => {
    const { key } = await gw.account();
    const answer = await client(key).embeddings.create({
      model: 'sandbox-embedding',
      input: ['first text', 'second text'],
      dimensions: 16,
      encoding_format: 'float',
    });
    assert.deepEqual(
      answer.data.map((d) => [d.index, d.embedding]),
      [
        [0, vectorOf('first text', 16)],
        [1, vectorOf('second text', 16)],
      ],
    );
    const [upstream] = await sent();
    assert.deepEqual([upstream.path, upstream.body.model, upstream.body.dimensions], ['/v1/embeddings', 'sandbox-embedding', 16]);
    assert.equal(upstream.headers.authorization, 'Bearer sk-sandbox');
  });

  test('encoding_format base64 is answered as the base64 of the little-endian float32 vector', async () => {
    const { key } = await gw.account();
    const answer = await client(key).embeddings.create({ model: 'sandbox-embedding', input: 'encoded', encoding_format: 'base64' });
    const text = answer.data[0]?.embedding as unknown as string;
    const bytes = Buffer.from(text, 'base64');
    const floats = Array.from({ length: bytes.length / 4 }, (_, i) => bytes.readFloatLE(i * 4));
    assert.deepEqual(floats, vectorOf('encoded', 1536));
  });

  test('token-id inputs are passed through and held for one token each', async () => {
    const { accountId, key } = await gw.account({ creditMicros: CREDIT });
    const ids = Array.from({ length: 40 }, (_, i) => i + 100);
    const answer = await client(key).embeddings.create({ model: 'sandbox-embedding', input: [ids, ids.slice(0, 20)], encoding_format: 'float' });
    assert.equal(answer.data.length, 2);
    assert.deepEqual((await sent())[0].body.input, [ids, ids.slice(0, 20)]);
    assert.equal((await gw.settled(accountId)).balance_micros, CREDIT - bill(60));
  });

  test('an Azure model goes to its deployment path with api-key, answered under the public model id', async () => {
    const { accountId, key } = await gw.account({ creditMicros: CREDIT });
    const answer = await client(key).embeddings.create({ model: 'sandbox-embedding-azure', input: TEXT });
    assert.equal(answer.model, 'sandbox-embedding-azure');
    assert.deepEqual(answer.data[0]?.embedding, vectorOf(TEXT, 1536));
    const [upstream] = await sent();
    assert.equal(upstream.path, '/openai/deployments/sandbox-embedding/embeddings?api-version=2024-10-21');
    assert.equal(upstream.headers['api-key'], 'sk-sandbox');
    assert.equal((await gw.settled(accountId)).balance_micros, CREDIT - bill(WORDS));
  });

  test('a Gemini model embeds one input with embedContent, billed on the gateway’s count (Gemini reports none)', async () => {
    const { accountId, key } = await gw.account({ creditMicros: CREDIT });
    const answer = await client(key).embeddings.create({ model: 'sandbox-embedding-gemini', input: TEXT });
    const tokens = countTokens(TEXT, 'o200k_base');
    assert.deepEqual(answer.data[0]?.embedding, vectorOf(TEXT, 768));
    assert.deepEqual([answer.model, answer.usage], ['sandbox-embedding-gemini', { prompt_tokens: tokens, total_tokens: tokens }]);
    const [upstream] = await sent();
    assert.deepEqual([upstream.path, upstream.body], ['/v1beta/models/sandbox-embedding:embedContent', { content: { parts: [{ text: TEXT }] } }]);
    assert.equal(upstream.headers['x-goog-api-key'], 'sk-sandbox');
    assert.equal((await gw.settled(accountId)).balance_micros, CREDIT - bill(tokens));
  });

  test('a Gemini model embeds several inputs with batchEmbedContents, outputDimensionality from dimensions', async () => {
    const { key } = await gw.account();
    const input = ['north gate', 'south gate', 'east gate'];
    const answer = await client(key).embeddings.create({ model: 'sandbox-embedding-gemini', input, dimensions: 8, encoding_format: 'float' });
    assert.deepEqual(
      answer.data.map((d) => d.embedding),
      input.map((text) => vectorOf(text, 8)),
    );
    const [upstream] = await sent();
    assert.equal(upstream.path, '/v1beta/models/sandbox-embedding:batchEmbedContents');
    assert.deepEqual(upstream.body.requests[1], { model: 'models/sandbox-embedding', content: { parts: [{ text: 'south gate' }] }, outputDimensionality: 8 });
  });

  test('a model on a Vertex AI channel embeds at its publisher-model path with the service account’s bearer token', async () => {
    const { key } = await gw.account();
    const answer = await client(key).embeddings.create({ model: 'vertex-embedding', input: ['one', 'two'], encoding_format: 'float' });
    assert.deepEqual(
      answer.data.map((d) => d.embedding),
      [vectorOf('one', 768), vectorOf('two', 768)],
    );
    const [upstream] = (await sent()).filter((request) => request.path.includes('Embed'));
    assert.equal(upstream.path, '/v1/projects/sandbox-project/locations/us-central1/publishers/google/models/text-embedding-005:batchEmbedContents');
    assert.match(upstream.headers.authorization, /^Bearer /);
    assert.equal(upstream.body.requests[0].model, 'projects/sandbox-project/locations/us-central1/publishers/google/models/text-embedding-005');
  });

  test('more than 100 inputs for a Gemini model are sent as batches of 100 and answered in order', async () => {
    const { accountId, key } = await gw.account({ creditMicros: CREDIT });
    const input = Array.from({ length: 230 }, (_, i) => `gate ${i}`);
    const answer = await client(key).embeddings.create({ model: 'sandbox-embedding-gemini', input, dimensions: 2, encoding_format: 'float' });
    assert.deepEqual(
      answer.data.map((d) => [d.index, d.embedding]),
      input.map((text, i) => [i, vectorOf(text, 2)]),
    );
    assert.deepEqual(
      (await sent()).map((request) => request.body.requests.length).sort((a, b) => b - a),
      [100, 100, 30],
    );
    const tokens = input.reduce((sum, text) => sum + countTokens(text, 'o200k_base'), 0);
    assert.equal((await gw.settled(accountId)).balance_micros, CREDIT - bill(tokens));
  });

  test('token ids for a Gemini model are a 400 naming input, nothing held and nothing sent', async () => {
    const { accountId, key } = await gw.account({ creditMicros: CREDIT });
    const refused = await gw.call(key, 'POST', '/v1/embeddings', { model: 'sandbox-embedding-gemini', input: [1, 2, 3] });
    assert.equal(refused.status, 400);
    assert.match(refused.body.error, /^input: token ids cannot be embedded by model sandbox-embedding-gemini/);
    assert.deepEqual(await sent(), []);
    assert.deepEqual(await ledgerKinds(accountId), ['credit']);
  });

  for (const [name, body, message] of [
    ['an empty string', { input: '' }, 'input: must not be an empty string'],
    ['an empty array', { input: [] }, 'input: must not be an empty array'],
    ['an empty string among the inputs', { input: ['a', ''] }, 'input[1]: must not be an empty string'],
    ['more than 2048 inputs', { input: Array.from({ length: 2049 }, () => 'a') }, 'input: at most 2048 inputs, got 2049'],
    ['a mix of forms', { input: ['a', 3] }, 'input[1]: expected a string, as input[0] is (one form per array)'],
    ['a negative token id', { input: [[1, -2]] }, 'input[0][1]: a token id must be a non-negative integer'],
    ['an object', { input: { text: 'a' } }, 'input: must be a string, or an array of strings, of token ids or of token-id arrays'],
    ['no input', {}, 'input field is required'],
    ['dimensions 0', { input: 'a', dimensions: 0 }, 'dimensions: must be >= 1'],
    ['another encoding', { input: 'a', encoding_format: 'hex' }, 'encoding_format: must be one of "float", "base64"'],
    ['a chat model', { input: 'a', model: 'sandbox-chat' }, 'model sandbox-chat is not an embedding model'],
  ] as const) {
    test(`${name} is refused with 400 naming the field, nothing held`, async () => {
      const { accountId, key } = await gw.account({ creditMicros: CREDIT });
      const answer = await gw.call(key, 'POST', '/v1/embeddings', { model: 'sandbox-embedding', ...body });
      assert.deepEqual(answer, { status: 400, body: { error: message, type: 'invalid_request_error' } });
      assert.deepEqual(await ledgerKinds(accountId), ['credit']);
      assert.deepEqual(await sent(), []);
    });
  }

  test('an upstream 500 is a 502 and the hold is released: nothing charged', async () => {
    const { accountId, key } = await gw.account({ creditMicros: CREDIT });
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'embeddings', status: 500, times: 1 });
    await assert.rejects(client(key).embeddings.create({ model: 'sandbox-embedding', input: TEXT }), (error: any) => error.status === 502);
    assert.equal((await gw.settled(accountId)).balance_micros, CREDIT);
    assert.deepEqual(await ledgerKinds(accountId), ['release', 'hold', 'credit']);
    assert.deepEqual(await usageRows(accountId), []);
  });

  test('a test key is answered by the sandbox and billed on its test balance', async () => {
    const { accountId } = await gw.account({ creditMicros: CREDIT });
    const testKey = (await gw.admin('POST', `/admin/accounts/${accountId}/test-keys`, { name: 'ci' })).body.key as string;
    await gw.admin('POST', `/admin/accounts/${accountId}/test-credit`, { amount_micros: CREDIT });
    const answer = await client(testKey).embeddings.create({ model: 'sandbox-embedding', input: TEXT });
    assert.deepEqual(answer.data[0]?.embedding, vectorOf(TEXT, 1536));
    assert.equal((await sent()).length, 1);
    const account = await eventually(async () => {
      const now = await gw.balance(accountId);
      return (now as any).test_held_micros === 0 && (now as any);
    });
    assert.deepEqual([account.balance_micros, account.test_balance_micros], [CREDIT, CREDIT - bill(WORDS)], 'the live balance is untouched');
  });

  test('an Idempotency-Key replay answers the same and is charged once', async () => {
    const { accountId, key } = await gw.account({ creditMicros: CREDIT });
    const call = async () => {
      const res = await request(`${gw.url}/v1/embeddings`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': 'embed-once' },
        body: JSON.stringify({ model: 'sandbox-embedding', input: TEXT, dimensions: 4 }),
      });
      return { status: res.statusCode, replayed: res.headers['idempotent-replayed'], body: await res.body.json() };
    };
    const first = await call();
    const replay = await call();
    assert.equal(first.status, 200);
    assert.deepEqual(replay, { status: 200, replayed: 'true', body: first.body });
    assert.equal((await sent()).length, 1);
    assert.equal((await usageRows(accountId)).length, 1);
    assert.equal((await gw.settled(accountId)).balance_micros, CREDIT - bill(WORDS));
  });
});
