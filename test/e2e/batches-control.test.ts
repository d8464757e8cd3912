// The Batch API's other paths end to end: a balance that runs out, cancel, the signed webhook, the
// list, and the input a batch refuses.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import { eventually, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { type Receiver, startReceiver } from '../helpers/receiver.js';

const chatLine = (customId: string, content: string, extra: Record<string, unknown> = {}) => ({
  custom_id: customId,
  method: 'POST',
  url: '/v1/chat/completions',
  body: { model: 'sandbox-chat', messages: [{ role: 'user', content }], max_tokens: 50, ...extra },
});
const jsonl = (lines: unknown[]) => `${lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line))).join('\n')}\n`;
const parseLines = (text: string) =>
  text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line));
const ENDED = ['completed', 'expired', 'cancelled', 'failed'];

describe('batch control', () => {
  let gw: TestGateway;
  let receiver: Receiver;
  before(async () => {
    gw = await startTestGateway();
    receiver = await startReceiver();
  });
  after(async () => {
    await receiver.close();
    await gw.close();
  });
  beforeEach(async () => {
    await gw.sandboxControl('DELETE', '/__sandbox/faults');
    await gw.sandboxControl('DELETE', '/__sandbox/requests');
  });

  const client = (key: string) => new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  const upload = async (key: string, text: string) =>
    (await client(key).files.create({ file: await toFile(Buffer.from(text), 'in.jsonl'), purpose: 'batch' })).id;
  const ended = (key: string, id: string) =>
    eventually(async () => {
      const batch = await client(key).batches.retrieve(id);
      return ENDED.includes(batch.status) && batch;
    }, 15_000);
  const contentOf = async (key: string, id: string | null | undefined) => (id ? parseLines(await (await client(key).files.content(id)).text()) : []);
  /** The prompts the sandbox received, one per request sent upstream. */
  const sentPrompts = async () =>
    ((await gw.sandboxControl('GET', '/__sandbox/requests')).data as { body: any }[]).map((r) => r.body?.messages?.[0]?.content).filter(Boolean);

  test('a balance that runs out fails the remaining lines with insufficient_balance, unsent, and the batch completes', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 250 });
    const lines = Array.from({ length: 12 }, (_, i) => chatLine(`line-${i}`, `prompt number ${i}`));
    const created = await client(key).batches.create({
      input_file_id: await upload(key, jsonl(lines)),
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    const batch = await ended(key, created.id);
    assert.equal(batch.status, 'completed');
    const output = await contentOf(key, batch.output_file_id);
    const errors = await contentOf(key, batch.error_file_id);
    assert.ok(output.length >= 1, 'the first lines ran');
    assert.equal(output.length + errors.length, 12);
    const unsent = errors.filter((line) => line.error?.code === 'insufficient_balance');
    assert.ok(unsent.length >= 1, 'lines after the balance ran out were not sent');
    for (const line of unsent) assert.equal(line.response, null);
    for (const line of errors.filter((l) => l.response !== null)) assert.equal(line.response.status_code, 402);
    // Only the lines that were held were sent upstream.
    const sent = await sentPrompts();
    for (const line of unsent) assert.ok(!sent.includes(`prompt number ${line.custom_id.slice('line-'.length)}`), line.custom_id);
    const account = await gw.settled(accountId);
    assert.ok(account.balance_micros >= 0);
  });

  test('a cancelled batch runs no more pending lines and ends cancelled with what ran', async () => {
    const { key } = await gw.account();
    await gw.sandboxControl('POST', '/__sandbox/faults', { model: 'sandbox-chat', delay_ms: 300 });
    const lines = Array.from({ length: 16 }, (_, i) => chatLine(`slow-${i}`, `slow prompt ${i}`));
    const created = await client(key).batches.create({
      input_file_id: await upload(key, jsonl(lines)),
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    await eventually(async () => (await sentPrompts()).length > 0);
    const cancelling = await client(key).batches.cancel(created.id);
    assert.ok(['cancelling', 'cancelled'].includes(cancelling.status), cancelling.status);
    const batch = await ended(key, created.id);
    assert.equal(batch.status, 'cancelled');
    assert.ok(batch.cancelled_at !== null && batch.cancelling_at !== null);
    const output = await contentOf(key, batch.output_file_id);
    assert.ok(output.length >= 1 && output.length < 16, `${output.length} lines ran`);
    assert.equal(batch.request_counts?.completed, output.length);
    assert.equal((await sentPrompts()).length, output.length, 'no pending line was sent after the cancel');
  });

  test('cancelling a completed batch is refused with 409', async () => {
    const { key } = await gw.account();
    const created = await client(key).batches.create({
      input_file_id: await upload(key, jsonl([chatLine('x', 'quick')])),
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    await ended(key, created.id);
    const answer = await gw.call(key, 'POST', `/v1/batches/${created.id}/cancel`);
    assert.equal(answer.status, 409);
  });

  test('a finished batch sends a signed batch.completed webhook carrying the batch', async () => {
    const { accountId, key } = await gw.account();
    receiver.secret = (await gw.admin('GET', `/admin/accounts/${accountId}/webhook-secret`)).body.secret;
    const input = await upload(key, jsonl([chatLine('hook', 'tell the hook')]));
    const created = await gw.call(key, 'POST', '/v1/batches', {
      input_file_id: input,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
      metadata: { project: 'tolls' },
      callback_url: receiver.url,
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const delivery = await eventually(() => receiver.deliveries.find((d) => d.payload.data?.id === created.body.id), 10_000);
    assert.equal(delivery.verified, true);
    assert.equal(delivery.payload.type, 'batch.completed');
    assert.equal(delivery.payload.data.object, 'batch');
    assert.equal(delivery.payload.data.status, 'completed');
    assert.deepEqual(delivery.payload.data.request_counts, { total: 1, completed: 1, failed: 0 });
    assert.deepEqual(delivery.payload.data.metadata, { project: 'tolls' });
    assert.ok(delivery.payload.data.output_file_id);
  });

  test('the list pages newest first with first_id, last_id and has_more', async () => {
    const { key } = await gw.account();
    const input = await upload(key, jsonl([chatLine('l', 'listed')]));
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push((await client(key).batches.create({ input_file_id: input, endpoint: '/v1/chat/completions', completion_window: '24h' })).id);
    const first = await gw.call(key, 'GET', '/v1/batches?limit=2');
    assert.equal(first.body.object, 'list');
    assert.deepEqual(
      first.body.data.map((b: { id: string }) => b.id),
      [ids[2], ids[1]],
    );
    assert.equal(first.body.has_more, true);
    assert.equal(first.body.first_id, ids[2]);
    assert.equal(first.body.last_id, ids[1]);
    const second = await gw.call(key, 'GET', `/v1/batches?limit=2&after=${first.body.last_id}`);
    assert.deepEqual(
      second.body.data.map((b: { id: string }) => b.id),
      [ids[0]],
    );
    assert.equal(second.body.has_more, false);
    const seen: string[] = [];
    for await (const batch of client(key).batches.list({ limit: 1 })) seen.push(batch.id);
    assert.deepEqual(seen, [ids[2], ids[1], ids[0]]);
  });

  test('another account’s batch and file are answered 404', async () => {
    const owner = await gw.account();
    const other = await gw.account();
    const input = await upload(owner.key, jsonl([chatLine('mine', 'private')]));
    const created = await client(owner.key).batches.create({ input_file_id: input, endpoint: '/v1/chat/completions', completion_window: '24h' });
    assert.equal((await gw.call(other.key, 'GET', `/v1/batches/${created.id}`)).status, 404);
    assert.equal((await gw.call(other.key, 'GET', `/v1/files/${input}`)).status, 404);
    assert.equal((await gw.call(other.key, 'GET', `/v1/files/${input}/content`)).status, 404);
    const refused = await gw.call(other.key, 'POST', '/v1/batches', { input_file_id: input, endpoint: '/v1/chat/completions', completion_window: '24h' });
    assert.equal(refused.status, 400);
  });

  describe('input a batch refuses with a 400 naming the field', () => {
    const refusal = async (text: string | undefined, body: Record<string, unknown> = {}) => {
      const { key } = await gw.account();
      const input = text === undefined ? 'file_00000000000000000000000000000000' : await upload(key, text);
      const answer = await gw.call(key, 'POST', '/v1/batches', { input_file_id: input, endpoint: '/v1/chat/completions', completion_window: '24h', ...body });
      assert.equal(answer.status, 400, JSON.stringify(answer.body));
      return answer.body.error as string;
    };
    test('an unknown file', async () => assert.match(await refusal(undefined), /^input_file_id: no file/));
    test('a file that is not JSONL', async () => assert.match(await refusal('this is not json\n'), /^input_file_id: line 1: not JSON/));
    test('a duplicate custom_id', async () =>
      assert.match(await refusal(jsonl([chatLine('same', 'a'), chatLine('same', 'b')])), /^input_file_id: line 2: custom_id:/));
    test('a line whose url is not the batch’s endpoint', async () =>
      assert.match(await refusal(jsonl([{ ...chatLine('a', 'b'), url: '/v1/responses' }])), /^input_file_id: line 1: url:/));
    test('a line that asks for a stream', async () =>
      assert.match(await refusal(jsonl([chatLine('a', 'b', { stream: true })])), /^input_file_id: line 1: body.stream:/));
    test('a completion window other than 24h', async () =>
      assert.match(await refusal(jsonl([chatLine('a', 'b')]), { completion_window: '1h' }), /^completion_window:/));
    test('an endpoint that batches do not call', async () =>
      assert.match(await refusal(jsonl([chatLine('a', 'b')]), { endpoint: '/v1/images/generations' }), /^endpoint:/));
    test('more than 16 metadata pairs', async () => {
      const metadata = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v']));
      assert.match(await refusal(jsonl([chatLine('a', 'b')]), { metadata }), /^metadata:/);
    });
    test('a file uploaded without purpose batch', async () => {
      const { key } = await gw.account();
      const plain = await client(key).files.create({ file: await toFile(Buffer.from(jsonl([chatLine('a', 'b')])), 'in.jsonl'), purpose: 'user_data' });
      const answer = await gw.call(key, 'POST', '/v1/batches', { input_file_id: plain.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
      assert.equal(answer.status, 400);
      assert.match(answer.body.error, /^input_file_id: .*purpose "batch"/);
    });
  });

  test('a request with the batch-line header and a wrong secret is refused as an invalid key', async () => {
    const { key } = await gw.account();
    const answer = await gw.call(
      key,
      'POST',
      '/v1/chat/completions',
      { model: 'sandbox-chat', messages: [{ role: 'user', content: 'x' }] },
      {
        'x-tollroute-batch-line': 'batch_x.0000',
      },
    );
    assert.equal(answer.status, 401);
  });
});
