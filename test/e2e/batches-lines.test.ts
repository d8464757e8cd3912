// What a batch's line is as a call: the key's limits apply, its per-minute rate limit does not,
// every endpoint a batch calls is billed at the batch price, and a batch past its window expires.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import { findBatch } from '../../src/store/batches.js';
import { eventually, startTestGateway, type TestGateway } from '../helpers/gateway.js';

type Endpoint = '/v1/chat/completions' | '/v1/messages' | '/v1/responses' | '/v1/embeddings';
const chat = (customId: string, content: string, model = 'sandbox-chat') => ({
  custom_id: customId,
  method: 'POST',
  url: '/v1/chat/completions',
  body: { model, messages: [{ role: 'user', content }], max_tokens: 20 },
});
const jsonl = (lines: unknown[]) => `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`;
const parseLines = (text: string) =>
  text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line));

describe('batch lines as calls', () => {
  let gw: TestGateway;
  before(async () => {
    // Test keys are served by this sandbox too (docs/api.md "Test mode").
    gw = await startTestGateway((sandboxUrl) => ({ test_mode: { sandbox_url: sandboxUrl } }));
  });
  after(() => gw.close());

  const client = (key: string) => new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  /** Creates the batch, then waits on the store (not the API, which counts against the key's rate limit). */
  async function run(key: string, lines: unknown[], endpoint: Endpoint = '/v1/chat/completions') {
    const openai = client(key);
    const file = await openai.files.create({ file: await toFile(Buffer.from(jsonl(lines)), 'in.jsonl'), purpose: 'batch' });
    const created = await openai.batches.create({ input_file_id: file.id, endpoint: endpoint as '/v1/chat/completions', completion_window: '24h' });
    const row = await eventually(async () => {
      const batch = await findBatch(gw.gateway.store.db, created.id);
      return batch && ['completed', 'expired', 'cancelled'].includes(batch.status) && batch;
    }, 15_000);
    const read = async (id: string | null) => (id ? parseLines(await (await openai.files.content(id)).text()) : []);
    return { row, output: await read(row.output_file_id), errors: await read(row.error_file_id) };
  }
  const usageOf = async (accountId: string) => (await gw.admin('GET', `/admin/accounts/${accountId}/usage`)).body.data as any[];

  test('lines are not counted against the key’s requests per minute', async () => {
    // Three requests a minute: the upload, the batch and one read of a file; six lines run all the same.
    const { key } = await gw.account({ rpm: 3 });
    const { row, output } = await run(
      key,
      Array.from({ length: 6 }, (_, i) => chat(`r${i}`, `rate ${i}`)),
    );
    assert.equal(row.status, 'completed');
    assert.equal(output.length, 6);
  });

  test('a key limited to some models has a line on another model refused with 403, uncharged', async () => {
    const owner = await gw.account();
    const limited = (await gw.call(owner.key, 'POST', '/v1/account/keys', { name: 'limited', allowed_models: ['sandbox-chat'] })).body.key as string;
    const { output, errors } = await run(limited, [chat('allowed', 'fine'), chat('refused', 'not this one', 'sandbox-claude')]);
    assert.deepEqual(
      output.map((l) => l.custom_id),
      ['allowed'],
    );
    assert.equal(errors[0].custom_id, 'refused');
    assert.equal(errors[0].response.status_code, 403);
    assert.equal((await usageOf(owner.accountId)).length, 1);
  });

  test('a line through /v1/responses is answered and billed at the batch price', async () => {
    const { accountId, key } = await gw.account();
    const line = { custom_id: 'resp', method: 'POST', url: '/v1/responses', body: { model: 'sandbox-chat', input: 'hello responses', max_output_tokens: 20 } };
    const { output } = await run(key, [line], '/v1/responses');
    assert.equal(output[0].response.status_code, 200);
    const { usage } = output[0].response.body;
    const [row] = await usageOf(accountId);
    assert.equal(row.amount_micros, usage.input_tokens * 1 + usage.output_tokens * 4);
  });

  test('a line through /v1/embeddings is billed at half the embedding price', async () => {
    const { accountId, key } = await gw.account();
    const input = 'a toll road at dawn and a bridge at night '.repeat(40);
    const line = { custom_id: 'emb', method: 'POST', url: '/v1/embeddings', body: { model: 'sandbox-embedding', input } };
    const { output, errors } = await run(key, [line], '/v1/embeddings');
    assert.equal(output.length, 1, JSON.stringify(errors));
    const [row] = await usageOf(accountId);
    // sandbox-embedding: 100 000 micros a million input tokens, batch_discount 50: 50 000, rounded up.
    const tokens = output[0].response.body.usage.prompt_tokens;
    assert.ok(tokens > 100, `${tokens} tokens`);
    assert.equal(row.amount_micros, Math.ceil((tokens * 50_000) / 1_000_000));
  });

  test('a test key’s batch runs on the sandbox and is not live', async () => {
    const { accountId } = await gw.account();
    const testKey = (await gw.admin('POST', `/admin/accounts/${accountId}/test-keys`, {})).body.key as string;
    await gw.admin('POST', `/admin/accounts/${accountId}/test-credit`, { amount_micros: 1_000_000 });
    const { row, output, errors } = await run(testKey, [chat('t', 'test mode')]);
    assert.equal(row.livemode, 0);
    assert.equal(output[0]?.response.status_code, 200, JSON.stringify(errors));
    const retrieved = (await client(testKey).batches.retrieve(row.id)) as { livemode?: boolean };
    assert.equal(retrieved.livemode, false);
  });

  test('a batch past its window expires: lines not yet run fail with batch_expired, unsent', async () => {
    const { key } = await gw.account();
    await gw.sandboxControl('POST', '/__sandbox/faults', { model: 'sandbox-chat', delay_ms: 300 });
    try {
      const openai = client(key);
      const lines = Array.from({ length: 12 }, (_, i) => chat(`e${i}`, `expiring ${i}`));
      const file = await openai.files.create({ file: await toFile(Buffer.from(jsonl(lines)), 'in.jsonl'), purpose: 'batch' });
      const created = await openai.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
      // The 24 hours pass at once.
      await gw.gateway.store.db.updateTable('batches').set({ expires_at: Date.now() }).where('id', '=', created.id).execute();
      const batch = await eventually(async () => {
        const current = await openai.batches.retrieve(created.id);
        return current.status === 'expired' && current;
      }, 15_000);
      assert.ok(batch.expired_at !== null);
      const errors = parseLines(await (await openai.files.content(batch.error_file_id!)).text());
      const expired = errors.filter((l) => l.error?.code === 'batch_expired');
      assert.ok(expired.length >= 1);
      assert.equal(batch.request_counts?.total, 12);
      assert.equal((batch.request_counts?.completed ?? 0) + (batch.request_counts?.failed ?? 0), 12);
    } finally {
      await gw.sandboxControl('DELETE', '/__sandbox/faults');
    }
  });
});
