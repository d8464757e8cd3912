// POST /v1/completions end to end: the official openai client → gateway → sandbox upstream, plain
// and streamed, with the exact bill of each (sandbox-chat: 2 micros an input token, 8 an output one).
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import OpenAI from 'openai';
import { countTokens } from '../../src/billing/tokens.js';
import { eventually, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { postForEvents } from '../helpers/sse.js';

const INPUT_PRICE = 2;
const OUTPUT_PRICE = 8;
const bill = (usage: { prompt_tokens: number; completion_tokens: number }) => usage.prompt_tokens * INPUT_PRICE + usage.completion_tokens * OUTPUT_PRICE;
const CREDIT = 1_000_000;

describe('completions', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway((sandboxUrl) => ({ test_mode: { sandbox_url: sandboxUrl } }));
  });
  after(() => gw.close());
  beforeEach(async () => {
    await gw.sandboxControl('DELETE', '/__sandbox/faults');
    await gw.sandboxControl('DELETE', '/__sandbox/requests');
  });

  const client = (key: string) => new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  const ledgerKinds = async (accountId: string) => (await gw.admin('GET', `/admin/accounts/${accountId}/ledger`)).body.data.map((row: any) => row.kind);
  const usageRows = async (accountId: string) => (await gw.admin('GET', `/admin/accounts/${accountId}/usage`)).body.data;

  test('a plain completion answers text_completion with the public model and moves the balance by exactly its usage', async () => {
    const { accountId, key } = await gw.account({ creditMicros: CREDIT });
    const completion = await client(key).completions.create({ model: 'sandbox-chat', prompt: 'tell me about toll roads', max_tokens: 20 });
    assert.equal(completion.object, 'text_completion');
    assert.equal(completion.model, 'sandbox-chat');
    assert.equal(completion.choices[0]?.text, 'Sandbox says: tell me about toll roads');
    assert.deepEqual(completion.usage, { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 });
    assert.deepEqual(await gw.settled(accountId), { ...(await gw.balance(accountId)), balance_micros: CREDIT - bill(completion.usage!), held_micros: 0 });
    const [row] = await usageRows(accountId);
    assert.deepEqual({ endpoint: row.endpoint, units: row.units }, { endpoint: 'completions', units: { input_token: 5, output_token: 7 } });
    const sent = (await gw.sandboxControl('GET', '/__sandbox/requests')).data.at(-1);
    assert.deepEqual(
      { path: sent.path, stream: sent.body.stream, auth: sent.headers.authorization },
      { path: '/v1/completions', stream: false, auth: 'Bearer sk-sandbox' },
    );
  });

  test('a streamed completion gives the same text, its usage in the last chunk, and is billed on that usage', async () => {
    const { accountId, key } = await gw.account({ creditMicros: CREDIT });
    const stream = await client(key).completions.create({
      model: 'sandbox-chat',
      prompt: 'stream these words please',
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let chunks = 0;
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      chunks += 1;
      assert.equal(chunk.model, 'sandbox-chat');
      text += chunk.choices[0]?.text ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    assert.equal(text, 'Sandbox says: stream these words please');
    assert.ok(chunks > 3, 'the answer arrives in several chunks');
    assert.deepEqual(usage, { prompt_tokens: 4, completion_tokens: 6, total_tokens: 10 });
    assert.equal((await gw.settled(accountId)).balance_micros, CREDIT - bill(usage!));
  });

  test('a stream without include_usage gets no usage chunk, yet the upstream is asked for it and the call billed on it', async () => {
    const { accountId, key } = await gw.account({ creditMicros: CREDIT });
    const stream = await client(key).completions.create({ model: 'sandbox-chat', prompt: 'count on me', stream: true });
    const seen = [];
    for await (const chunk of stream) seen.push(chunk);
    assert.ok(
      seen.every((chunk) => chunk.choices.length === 1 && !chunk.usage),
      'every chunk carries a choice and no usage',
    );
    const sent = (await gw.sandboxControl('GET', '/__sandbox/requests')).data.at(-1);
    assert.deepEqual(sent.body.stream_options, { include_usage: true });
    await gw.settled(accountId);
    const [row] = await usageRows(accountId);
    assert.deepEqual(row.units, { input_token: 3, output_token: 5 }); // "Sandbox says: count on me"
    assert.equal((await gw.balance(accountId)).balance_micros, CREDIT - bill({ prompt_tokens: 3, completion_tokens: 5 }));
  });

  test('an array of prompts with n choices each answers every choice, billed on the whole usage', async () => {
    const { accountId, key } = await gw.account({ creditMicros: CREDIT });
    const completion = await client(key).completions.create({ model: 'sandbox-chat', prompt: ['one two', 'three'], n: 2, max_tokens: 10 });
    assert.deepEqual(
      completion.choices.map((c) => [c.index, c.text]),
      [
        [0, 'Sandbox says: one two'],
        [1, 'Sandbox says: one two'],
        [2, 'Sandbox says: three'],
        [3, 'Sandbox says: three'],
      ],
    );
    assert.deepEqual(completion.usage, { prompt_tokens: 3, completion_tokens: 14, total_tokens: 17 });
    assert.equal((await gw.settled(accountId)).balance_micros, CREDIT - bill(completion.usage!));
  });

  test('a prompt of another form is a 400 naming prompt, and nothing is held', async () => {
    const { accountId, key } = await gw.account({ creditMicros: CREDIT });
    for (const prompt of [{ text: 'hi' }, ['fine', 7], [], undefined]) {
      const { status, body } = await gw.call(key, 'POST', '/v1/completions', { model: 'sandbox-chat', prompt });
      assert.equal(status, 400, JSON.stringify(prompt));
      assert.equal(body.type, 'invalid_request_error');
      assert.match(body.error, /^prompt/, JSON.stringify(body));
    }
    assert.deepEqual(await ledgerKinds(accountId), ['credit']);
    assert.equal((await gw.sandboxControl('GET', '/__sandbox/requests')).data.length, 0);
  });

  test('a token-id prompt is carried to the upstream as it is', async () => {
    const { key } = await gw.account({ creditMicros: CREDIT });
    const completion = await client(key).completions.create({ model: 'sandbox-chat', prompt: [101, 102, 103], max_tokens: 10 });
    assert.equal(completion.choices[0]?.text, 'Sandbox says: t101 t102 t103');
    const sent = (await gw.sandboxControl('GET', '/__sandbox/requests')).data.at(-1);
    assert.deepEqual(sent.body.prompt, [101, 102, 103]);
  });

  test('max_tokens above the model’s maximum is a 400 naming max_tokens', async () => {
    const { key } = await gw.account({ creditMicros: CREDIT });
    const { status, body } = await gw.call(key, 'POST', '/v1/completions', { model: 'sandbox-chat', prompt: 'hi', max_tokens: 1_000_000 });
    assert.equal(status, 400);
    assert.match(body.error, /^max_tokens: at most 4096/);
  });

  test('a chat model on a channel without the completions API is a 400 naming model, and nothing is held', async () => {
    const { accountId, key } = await gw.account({ creditMicros: CREDIT });
    for (const model of ['sandbox-claude', 'sandbox-gemini', 'sandbox-bedrock']) {
      const { status, body } = await gw.call(key, 'POST', '/v1/completions', { model, prompt: 'hi' });
      assert.equal(status, 400, model);
      assert.match(body.error, new RegExp(`^model: ${model} is served by a \\w+ channel, which has no completions API`));
    }
    assert.deepEqual(await ledgerKinds(accountId), ['credit']);
  });

  test('a model on an Azure channel is called at its deployment path with the channel’s model name', async () => {
    const { accountId, key } = await gw.account({ creditMicros: CREDIT });
    const completion = await client(key).completions.create({ model: 'sandbox-azure', prompt: 'hello azure', max_tokens: 10 });
    assert.equal(completion.model, 'sandbox-azure');
    assert.equal(completion.choices[0]?.text, 'Sandbox says: hello azure');
    const sent = (await gw.sandboxControl('GET', '/__sandbox/requests')).data.at(-1);
    assert.equal(sent.path, '/openai/deployments/sandbox-azure/completions?api-version=2024-10-21');
    assert.equal((await gw.settled(accountId)).balance_micros, CREDIT - bill(completion.usage!));
  });

  test('an upstream 500 answers 502 and the hold is released in full', async () => {
    const { accountId, key } = await gw.account({ creditMicros: CREDIT });
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'completions', status: 500, times: 1 });
    await assert.rejects(client(key).completions.create({ model: 'sandbox-chat', prompt: 'hi' }), (error: any) => error.status === 502);
    assert.equal((await gw.settled(accountId)).balance_micros, CREDIT);
    assert.deepEqual(await ledgerKinds(accountId), ['release', 'hold', 'credit']);
  });

  test('a stream the upstream breaks midway ends with an error event and costs nothing', async () => {
    const { accountId, key } = await gw.account({ creditMicros: CREDIT });
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'completions', drop_after_chunks: 3, times: 1 });
    const { status, events } = await postForEvents(
      `${gw.url}/v1/completions`,
      { model: 'sandbox-chat', prompt: '[[words:20]]', stream: true },
      { authorization: `Bearer ${key}` },
    );
    assert.equal(status, 200);
    assert.deepEqual(events.at(-1)!.data, { error: { message: 'upstream provider error', type: 'server_error', param: null, code: null } });
    assert.ok(!events.some((e) => e.data === '[DONE]'));
    assert.equal((await gw.settled(accountId)).balance_micros, CREDIT);
    assert.deepEqual(await usageRows(accountId), []);
  });

  test('a caller who leaves mid-stream stops the upstream and pays the prompt and the text delivered', async () => {
    const { accountId, key } = await gw.account({ creditMicros: CREDIT });
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'completions', chunk_delay_ms: 20, times: 1 });
    const prompt = '[[words:500]]';
    const controller = new AbortController();
    const stream = await client(key).completions.create({ model: 'sandbox-chat', prompt, stream: true }, { signal: controller.signal });
    let text = '';
    let received = 0;
    try {
      for await (const chunk of stream) {
        text += chunk.choices[0]?.text ?? '';
        received += 1;
        if (received === 5) controller.abort();
      }
    } catch {
      // the client's own abort may surface as an error or as the end of iteration
    }
    assert.equal(received, 5);
    const row = await eventually(async () => (await usageRows(accountId))[0]);
    assert.equal(row.units.input_token, countTokens(prompt));
    assert.ok(row.units.output_token >= countTokens(text) && row.units.output_token < 500, `billed ${JSON.stringify(row.units)} for ${JSON.stringify(text)}`);
    assert.equal(row.amount_micros, bill({ prompt_tokens: row.units.input_token, completion_tokens: row.units.output_token }));
    const upstream = await eventually(async () => {
      const last = (await gw.sandboxControl('GET', '/__sandbox/requests')).data.at(-1);
      return last?.aborted && last;
    });
    assert.equal(upstream.aborted, true);
    assert.deepEqual(await gw.settled(accountId), { ...(await gw.balance(accountId)), balance_micros: CREDIT - row.amount_micros, held_micros: 0 });
  });

  test('an Idempotency-Key replays the first answer and charges once', async () => {
    const { accountId, key } = await gw.account({ creditMicros: CREDIT });
    const send = () =>
      gw.call(key, 'POST', '/v1/completions', { model: 'sandbox-chat', prompt: 'once only', max_tokens: 10 }, { 'idempotency-key': 'cmpl-42' });
    const first = await send();
    const second = await send();
    assert.equal(second.status, 200);
    assert.deepEqual(second.body, first.body);
    const rows = await usageRows(accountId);
    assert.equal(rows.length, 1);
    assert.equal((await gw.settled(accountId)).balance_micros, CREDIT - bill(first.body.usage));
    assert.equal((await gw.sandboxControl('GET', '/__sandbox/requests')).data.length, 1);
  });

  test('a test key is served by the sandbox and billed on the test balance', async () => {
    const { accountId } = await gw.account({ creditMicros: CREDIT });
    const issued = await gw.admin('POST', `/admin/accounts/${accountId}/test-keys`, { name: 'ci' });
    assert.equal((await gw.admin('POST', `/admin/accounts/${accountId}/test-credit`, { amount_micros: 500_000 })).status, 200);
    const completion = await client(issued.body.key).completions.create({ model: 'sandbox-chat', prompt: 'test mode', max_tokens: 10 });
    assert.equal(completion.choices[0]?.text, 'Sandbox says: test mode');
    const account = await eventually(async () => {
      const seen = (await gw.admin('GET', `/admin/accounts/${accountId}`)).body;
      return seen.test_held_micros === 0 && seen;
    });
    assert.deepEqual([account.balance_micros, account.test_balance_micros], [CREDIT, 500_000 - bill(completion.usage!)]);
  });
});
