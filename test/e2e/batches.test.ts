// The Batch API end to end: official openai client → gateway → its own pipeline for each line →
// sandbox upstreams; each line held and settled on its own at the model's batch price.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import { eventually, startTestGateway, type TestGateway } from '../helpers/gateway.js';

// sandbox-chat: 2 and 8 micros a token, batch_discount 50 → 1 and 4 for a batch's line.
const batchBill = (usage: { prompt_tokens: number; completion_tokens: number }) => usage.prompt_tokens * 1 + usage.completion_tokens * 4;

const chatLine = (customId: string, content: string, model = 'sandbox-chat') => ({
  custom_id: customId,
  method: 'POST',
  url: '/v1/chat/completions',
  body: { model, messages: [{ role: 'user', content }], max_tokens: 50 },
});
const jsonl = (lines: unknown[]) => `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`;
const outputLines = (text: string) =>
  text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line));

describe('batches', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway();
  });
  after(() => gw.close());
  beforeEach(() => gw.sandboxControl('DELETE', '/__sandbox/faults'));

  const client = (key: string) => new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });

  async function runBatch(key: string, lines: unknown[], endpoint: '/v1/chat/completions' | '/v1/messages' | '/v1/responses' = '/v1/chat/completions') {
    const openai = client(key);
    const file = await openai.files.create({ file: await toFile(Buffer.from(jsonl(lines)), 'in.jsonl'), purpose: 'batch' });
    // The SDK's type does not list /v1/messages, which the gateway's batches call too.
    const created = await openai.batches.create({ input_file_id: file.id, endpoint: endpoint as '/v1/chat/completions', completion_window: '24h' });
    const done = await eventually(async () => {
      const batch = await openai.batches.retrieve(created.id);
      return ['completed', 'expired', 'cancelled', 'failed'].includes(batch.status) && batch;
    }, 15_000);
    const read = async (id: string | null | undefined) => (id ? outputLines(await (await openai.files.content(id)).text()) : []);
    return { file, created, done, output: await read(done.output_file_id), errors: await read(done.error_file_id) };
  }

  test('a batch of chat lines completes with an answer for each custom_id', async () => {
    const { key } = await gw.account();
    const lines = ['one', 'two', 'three', 'four', 'five', 'six'].map((word) => chatLine(`line-${word}`, `say ${word}`));
    const { created, done, output, errors } = await runBatch(key, lines);
    assert.equal(created.object, 'batch');
    assert.match(created.id, /^batch_/);
    assert.equal(done.status, 'completed');
    assert.deepEqual(done.request_counts, { total: 6, completed: 6, failed: 0 });
    assert.equal(errors.length, 0);
    assert.equal(done.error_file_id, null);
    const byId = new Map(output.map((line) => [line.custom_id, line]));
    for (const word of ['one', 'two', 'three', 'four', 'five', 'six']) {
      const line = byId.get(`line-${word}`);
      assert.equal(line.response.status_code, 200);
      assert.equal(line.error, null);
      assert.match(line.response.request_id, /^req_/);
      assert.equal(line.response.body.choices[0].message.content, `Sandbox says: say ${word}`);
    }
  });

  test('each line is billed on its own at exactly the batch price', async () => {
    const credit = 1_000_000;
    const { accountId, key } = await gw.account({ creditMicros: credit });
    const { created, output } = await runBatch(key, [chatLine('a', 'first line'), chatLine('b', 'the second line is longer than the first')]);
    const usage = (await gw.admin('GET', `/admin/accounts/${accountId}/usage`)).body.data as {
      request_id: string;
      client_request_id: string;
      amount_micros: number;
    }[];
    assert.equal(usage.length, 2);
    assert.deepEqual(usage.map((u) => u.client_request_id).sort(), [`${created.id}:1`, `${created.id}:2`], 'each usage row names its batch and line');
    let total = 0;
    for (const line of output) {
      const row = usage.find((u) => u.request_id === line.response.request_id);
      assert.ok(row, `a usage row for ${line.custom_id}`);
      assert.equal(row.amount_micros, batchBill(line.response.body.usage));
      total += row.amount_micros;
    }
    const account = await gw.settled(accountId);
    assert.equal(account.balance_micros, credit - total);
  });

  test('the batch reports its lines’ tokens in usage', async () => {
    const { key } = await gw.account();
    const { done, output } = await runBatch(key, [chatLine('a', 'count my tokens')]);
    const usage = output[0].response.body.usage;
    assert.equal(done.usage?.input_tokens, usage.prompt_tokens);
    assert.equal(done.usage?.output_tokens, usage.completion_tokens);
  });

  test('lines on sandbox-claude run through /v1/messages at the model’s price', async () => {
    const { key } = await gw.account();
    const line = {
      custom_id: 'claude-1',
      method: 'POST',
      url: '/v1/messages',
      body: { model: 'sandbox-claude', max_tokens: 50, messages: [{ role: 'user', content: 'hello claude' }] },
    };
    const { done, output } = await runBatch(key, [line], '/v1/messages');
    assert.equal(done.status, 'completed');
    assert.equal(output[0].response.status_code, 200);
    assert.equal(output[0].response.body.type, 'message');
  });

  test('a chat line routed to an Anthropic upstream is translated and answered in chat form', async () => {
    const { key } = await gw.account();
    const { output } = await runBatch(key, [chatLine('to-claude', 'translate me', 'sandbox-claude')]);
    assert.equal(output[0].response.status_code, 200);
    assert.equal(output[0].response.body.object, 'chat.completion');
  });

  test('a line whose upstream fails lands in the error file and is not charged', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'azure', status: 500 });
    const { done, output, errors } = await runBatch(key, [chatLine('fine', 'all good'), chatLine('broken', 'fails upstream', 'sandbox-azure')]);
    assert.equal(done.status, 'completed');
    assert.deepEqual(done.request_counts, { total: 2, completed: 1, failed: 1 });
    assert.deepEqual(
      output.map((line) => line.custom_id),
      ['fine'],
    );
    assert.equal(errors.length, 1);
    assert.equal(errors[0].custom_id, 'broken');
    assert.equal(errors[0].response.status_code, 502);
    const usage = (await gw.admin('GET', `/admin/accounts/${accountId}/usage`)).body.data as { request_id: string }[];
    assert.deepEqual(
      usage.map((row) => row.request_id),
      [output[0].response.request_id],
    );
    const account = await gw.settled(accountId);
    assert.equal(account.balance_micros, 1_000_000 - batchBill(output[0].response.body.usage));
  });
});
