// batches.lines_per_account bounds how many of an account's lines run at once.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import { eventually, startTestGateway, type TestGateway } from '../helpers/gateway.js';

const LINES = 4;
const UPSTREAM_DELAY_MS = 500;

describe('batch settings', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway({ batches: { lines_per_account: 1, tick_ms: 50 } });
  });
  after(() => gw.close());

  test('with lines_per_account 1 an account’s lines run one after another, never side by side', async () => {
    const { key } = await gw.account();
    const openai = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'chat', delay_ms: UPSTREAM_DELAY_MS });
    const lines = Array.from({ length: LINES }, (_, i) => ({
      custom_id: `line-${i}`,
      method: 'POST',
      url: '/v1/chat/completions',
      body: { model: 'sandbox-chat', messages: [{ role: 'user', content: `line ${i}` }], max_tokens: 20 },
    }));
    const jsonl = `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`;
    const file = await openai.files.create({ file: await toFile(Buffer.from(jsonl), 'in.jsonl'), purpose: 'batch' });
    const startedAt = Date.now();
    const created = await openai.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const done = await eventually(async () => {
      const batch = await openai.batches.retrieve(created.id);
      return batch.status === 'completed' && batch;
    }, 20_000);
    const elapsedMs = Date.now() - startedAt;
    assert.deepEqual(done.request_counts, { total: LINES, completed: LINES, failed: 0 });
    // side by side (the default of 4) they would all be done in about one delay
    assert.ok(elapsedMs >= LINES * UPSTREAM_DELAY_MS * 0.95, `the batch took ${elapsedMs} ms`);
  });
});
