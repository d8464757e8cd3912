// POST /v1/moderations and POST /v1/rerank end to end: the official openai client (and fetch) →
// gateway → sandbox upstream, with the exact bill of each: moderation one call at 0, rerank one call
// at 1000 micros, and a rerank model priced on tokens settled on the upstream's count.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import OpenAI from 'openai';
import { sandboxCatalogue } from '../../src/config/sandbox-catalogue.js';
import { eventually, startTestGateway, type TestGateway } from '../helpers/gateway.js';

const CREDIT = 1_000_000;
const RERANK_CALL = 1_000;
/** A rerank model priced per input token (1 micro each) and per call. */
const TOKEN_RERANK = { type: 'rerank' as const, channel: 'sandbox-openai', upstream_model: 'sandbox-rerank', price: { input_token: 1_000_000, call: 500 } };

const DOCUMENTS = ['The bridge opened in 1932.', 'Tolls are paid at the gate.', 'Road tolls are paid by transponder or at the gate.', 'A road.'];

describe('moderations and rerank', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway((sandboxUrl) => ({
      models: { ...sandboxCatalogue(sandboxUrl).models, 'rerank-by-token': TOKEN_RERANK },
      test_mode: { sandbox_url: sandboxUrl },
    }));
  });
  after(() => gw.close());
  beforeEach(async () => {
    await gw.sandboxControl('DELETE', '/__sandbox/faults');
    await gw.sandboxControl('DELETE', '/__sandbox/requests');
  });

  const client = (key: string) => new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  const ledgerKinds = async (accountId: string) => (await gw.admin('GET', `/admin/accounts/${accountId}/ledger`)).body.data.map((row: any) => row.kind);
  const usageRows = async (accountId: string) => (await gw.admin('GET', `/admin/accounts/${accountId}/usage`)).body.data;
  const upstreamRequests = async () => (await gw.sandboxControl('GET', '/__sandbox/requests')).data;
  const rerankCall = (key: string, body: unknown, headers: Record<string, string> = {}) => gw.call(key, 'POST', '/v1/rerank', body, headers);

  test('a moderation flags the categories of its marker words, with OpenAI’s category names, at the public model', async () => {
    const { key } = await gw.account({ creditMicros: CREDIT });
    const answer = await client(key).moderations.create({ model: 'sandbox-moderation', input: 'I hate them and will kill them' });
    assert.equal(answer.model, 'sandbox-moderation');
    assert.equal(answer.results.length, 1);
    const [result] = answer.results;
    assert.equal(result!.flagged, true);
    assert.deepEqual(
      Object.entries(result!.categories)
        .filter(([, flagged]) => flagged)
        .map(([name]) => name),
      ['hate', 'violence'],
    );
    assert.ok(result!.category_scores.hate > 0.9 && result!.category_scores['self-harm/intent'] < 0.01);
    const sent = (await upstreamRequests()).at(-1);
    assert.deepEqual(
      { path: sent.path, auth: sent.headers.authorization, model: sent.body.model },
      { path: '/v1/moderations', auth: 'Bearer sk-sandbox', model: 'sandbox-moderation' },
    );
  });

  test('a moderation is billed one call at the model’s price of 0: a usage row of 0 and the balance unchanged', async () => {
    const { accountId, key } = await gw.account({ creditMicros: CREDIT });
    const answer = await client(key).moderations.create({ model: 'sandbox-moderation', input: ['a calm sentence', 'another one'] });
    assert.deepEqual(
      answer.results.map((r) => r.flagged),
      [false, false],
    );
    assert.deepEqual(await gw.settled(accountId), { ...(await gw.balance(accountId)), balance_micros: CREDIT, held_micros: 0 });
    const rows = await usageRows(accountId);
    assert.deepEqual(
      rows.map((row: any) => [row.endpoint, row.units, row.amount_micros]),
      [['moderations', { call: 1 }, 0]],
    );
    assert.deepEqual(await ledgerKinds(accountId), ['settle', 'hold', 'credit']);
  });

  test('a multimodal moderation input of text and an image is one result', async () => {
    const { key } = await gw.account({ creditMicros: CREDIT });
    const answer = await client(key).moderations.create({
      model: 'sandbox-moderation',
      input: [
        { type: 'text', text: 'look at this gore' },
        { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
      ],
    });
    assert.equal(answer.results.length, 1);
    assert.equal(answer.results[0]!.categories['violence/graphic'], true);
    assert.deepEqual(answer.results[0]!.category_applied_input_types['violence/graphic'], ['text', 'image']);
  });

  test('a moderation input of another form is a 400 naming input, and nothing is held', async () => {
    const { accountId, key } = await gw.account({ creditMicros: CREDIT });
    for (const input of [42, [], ['fine', 3], [{ type: 'video', url: 'x' }], undefined]) {
      const { status, body } = await gw.call(key, 'POST', '/v1/moderations', { model: 'sandbox-moderation', input });
      assert.equal(status, 400, JSON.stringify(input));
      assert.match(body.error, /^input/, JSON.stringify(body));
    }
    assert.deepEqual(await ledgerKinds(accountId), ['credit']);
    assert.equal((await upstreamRequests()).length, 0);
  });

  test('a moderation whose upstream fails answers 502 and records no usage', async () => {
    const { accountId, key } = await gw.account({ creditMicros: CREDIT });
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'moderations', status: 500, times: 1 });
    await assert.rejects(client(key).moderations.create({ model: 'sandbox-moderation', input: 'hi' }), (error: any) => error.status === 502);
    assert.equal((await gw.settled(accountId)).balance_micros, CREDIT);
    assert.deepEqual(await usageRows(accountId), []);
  });

  test('a rerank answers its results sorted by relevance, top_n at most, with documents when asked, for 1000 micros', async () => {
    const { accountId, key } = await gw.account({ creditMicros: CREDIT });
    const { status, body } = await rerankCall(key, {
      model: 'sandbox-rerank',
      query: 'road tolls paid',
      documents: DOCUMENTS,
      top_n: 3,
      return_documents: true,
    });
    assert.equal(status, 200, JSON.stringify(body));
    assert.equal(body.model, 'sandbox-rerank');
    assert.deepEqual(
      body.results.map((r: any) => [r.index, r.relevance_score, r.document.text]),
      [
        [2, 1, DOCUMENTS[2]],
        [1, 0.6667, DOCUMENTS[1]],
        [3, 0.3333, DOCUMENTS[3]],
      ],
    );
    assert.equal(typeof body.usage.total_tokens, 'number');
    assert.deepEqual(await gw.settled(accountId), { ...(await gw.balance(accountId)), balance_micros: CREDIT - RERANK_CALL, held_micros: 0 });
    assert.deepEqual(
      (await usageRows(accountId)).map((row: any) => [row.endpoint, row.units, row.amount_micros]),
      [['rerank', { call: 1 }, RERANK_CALL]],
    );
  });

  test('a rerank through the openai client’s post: every document ranked, none returned unless asked for', async () => {
    const { key } = await gw.account({ creditMicros: CREDIT });
    const answer: any = await client(key).post('/rerank', { body: { model: 'sandbox-rerank', query: 'bridge', documents: DOCUMENTS } });
    assert.deepEqual(
      answer.results.map((r: any) => r.index),
      [0, 1, 2, 3],
    );
    assert.ok(answer.results.every((r: any) => !('document' in r)));
    const sent = (await upstreamRequests()).at(-1);
    assert.deepEqual({ path: sent.path, auth: sent.headers.authorization }, { path: '/v1/rerank', auth: 'Bearer sk-sandbox' });
  });

  test('documents sent as objects go upstream as their texts and come back as they were sent', async () => {
    const { key } = await gw.account({ creditMicros: CREDIT });
    const documents = [
      { text: 'tolls at the gate', id: 'a' },
      { text: 'a quiet lake', id: 'b' },
    ];
    const { body } = await rerankCall(key, { model: 'sandbox-rerank', query: 'gate', documents, top_n: 1, return_documents: true });
    assert.deepEqual(body.results, [{ index: 0, relevance_score: 1, document: { text: 'tolls at the gate', id: 'a' } }]);
    assert.deepEqual((await upstreamRequests()).at(-1).body.documents, ['tolls at the gate', 'a quiet lake']);
  });

  test('a rerank model priced on tokens is settled on the upstream’s token count', async () => {
    const { accountId, key } = await gw.account({ creditMicros: CREDIT });
    const { status, body } = await rerankCall(key, { model: 'rerank-by-token', query: 'road tolls paid', documents: DOCUMENTS });
    assert.equal(status, 200);
    assert.equal(body.model, 'rerank-by-token');
    const tokens = body.usage.total_tokens; // the sandbox counts words: 3 + 5 + 6 + 10 + 2
    assert.equal(tokens, 26);
    assert.equal((await gw.settled(accountId)).balance_micros, CREDIT - 500 - tokens);
    assert.deepEqual((await usageRows(accountId))[0].units, { call: 1, input_token: tokens });
  });

  test('a bad rerank request is a 400 naming its field, and nothing is held', async () => {
    const { accountId, key } = await gw.account({ creditMicros: CREDIT });
    const cases: [unknown, RegExp][] = [
      [{ model: 'sandbox-rerank', query: 'q', documents: ['fine', 7] }, /^documents\[1\]/],
      [{ model: 'sandbox-rerank', query: 'q', documents: [] }, /^documents/],
      [{ model: 'sandbox-rerank', query: '', documents: ['a'] }, /query/],
      [{ model: 'sandbox-rerank', query: 'q', documents: ['a'], top_n: 0 }, /top_n/],
    ];
    for (const [request, message] of cases) {
      const { status, body } = await rerankCall(key, request);
      assert.equal(status, 400, JSON.stringify(request));
      assert.match(body.error, message, JSON.stringify(body));
    }
    assert.deepEqual(await ledgerKinds(accountId), ['credit']);
  });

  test('a rerank whose upstream fails answers 502 and the hold is released', async () => {
    const { accountId, key } = await gw.account({ creditMicros: CREDIT });
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'rerank', status: 500, times: 1 });
    const { status } = await rerankCall(key, { model: 'sandbox-rerank', query: 'q', documents: ['a'] });
    assert.equal(status, 502);
    assert.equal((await gw.settled(accountId)).balance_micros, CREDIT);
    assert.deepEqual(await ledgerKinds(accountId), ['release', 'hold', 'credit']);
  });

  test('an Idempotency-Key replays a rerank and charges it once', async () => {
    const { accountId, key } = await gw.account({ creditMicros: CREDIT });
    const body = { model: 'sandbox-rerank', query: 'gate', documents: DOCUMENTS };
    const first = await rerankCall(key, body, { 'idempotency-key': 'rerank-1' });
    const second = await rerankCall(key, body, { 'idempotency-key': 'rerank-1' });
    assert.deepEqual([second.status, second.body], [200, first.body]);
    assert.equal((await gw.settled(accountId)).balance_micros, CREDIT - RERANK_CALL);
    assert.equal((await upstreamRequests()).length, 1);
  });

  test('a test key reranks on the sandbox, billed on the test balance', async () => {
    const { accountId } = await gw.account({ creditMicros: CREDIT });
    const issued = await gw.admin('POST', `/admin/accounts/${accountId}/test-keys`, { name: 'ci' });
    assert.equal((await gw.admin('POST', `/admin/accounts/${accountId}/test-credit`, { amount_micros: 100_000 })).status, 200);
    const { status } = await rerankCall(issued.body.key, { model: 'sandbox-rerank', query: 'gate', documents: DOCUMENTS });
    assert.equal(status, 200);
    const account = await eventually(async () => {
      const seen = (await gw.admin('GET', `/admin/accounts/${accountId}`)).body;
      return seen.test_held_micros === 0 && seen;
    });
    assert.deepEqual([account.balance_micros, account.test_balance_micros], [CREDIT, 100_000 - RERANK_CALL]);
  });
});
