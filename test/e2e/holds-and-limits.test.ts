// Holds count everything a request carries, counted with the model's tokenizer; absurd output caps
// are refused; Idempotency-Key is refused plainly on streams; a stream left before the upstream
// answered pays nothing.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import { chatPromptTokens } from '../../src/billing/estimates.js';
import { LONG_TEXT_CHARS } from '../../src/billing/prompt-tokens.js';
import { countTokens } from '../../src/billing/tokens.js';
import { eventually, startTestGateway, type TestGateway } from '../helpers/gateway.js';

const sandboxChat = { id: 'sandbox-chat', config: { tokenizer: 'o200k_base', image_input_tokens: 1_600, max_output_tokens: 4_096 } } as const;
const weatherTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'The weather where the user asks about, in great detail, with every field',
    parameters: { type: 'object', properties: { city: { type: 'string', description: 'the city' } } },
  },
};

describe('holds and limits', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway();
  });
  after(() => gw.close());

  /** The amount the gateway held for one plain chat call with `body`. */
  async function heldFor(body: Record<string, unknown>) {
    const { accountId, key } = await gw.account({ creditMicros: 10_000_000 });
    const res = await gw.call(key, 'POST', '/v1/chat/completions', { model: 'sandbox-chat', max_tokens: 10, ...body });
    assert.equal(res.status, 200);
    const ledger = (await gw.admin('GET', `/admin/accounts/${accountId}/ledger`)).body.data;
    return -ledger.find((row: any) => row.kind === 'hold').balance_delta_micros as number;
  }

  test('the hold counts the prompt with the model’s tokenizer, and the output cap asked for', async () => {
    const messages = [{ role: 'user', content: 'What is the capital of France? Answer in one word.' }];
    assert.equal(await heldFor({ messages }), chatPromptTokens({ messages }, sandboxChat) * 2 + 10 * 8);
    assert.ok(chatPromptTokens({ messages }, sandboxChat) >= countTokens(messages[0]!.content));
  });

  test('a prompt long enough to be counted off the event loop is held for its exact count', async () => {
    const long = Array.from({ length: 12_000 }, (_, i) => `word${i % 97}`).join(' '); // about 90 000 characters
    assert.ok(long.length >= LONG_TEXT_CHARS);
    const messages = [{ role: 'user', content: long }];
    assert.equal(await heldFor({ messages }), chatPromptTokens({ messages }, sandboxChat) * 2 + 10 * 8);
  });

  test('tool definitions and image parts are held for too', async () => {
    const messages = [{ role: 'user', content: 'weather?' }];
    const plain = await heldFor({ messages });
    const withTools = await heldFor({ messages, tools: [weatherTool] });
    assert.equal(withTools - plain, countTokens(JSON.stringify([weatherTool])) * 2);
    const withImage = await heldFor({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'weather?' },
            { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
          ],
        },
      ],
    });
    assert.ok(withImage - plain >= 1_600 * 2, 'an image is held at the model’s per-image rate');
  });

  test('a max_tokens beyond the model’s maximum is a 400 naming it, and nothing is held', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 10_000_000 });
    for (const [field, path, extra] of [
      ['max_tokens', '/v1/chat/completions', { messages: [{ role: 'user', content: 'x' }] }],
      ['max_completion_tokens', '/v1/chat/completions', { messages: [{ role: 'user', content: 'x' }] }],
      ['max_output_tokens', '/v1/responses', { input: 'x' }],
    ] as const) {
      const res = await gw.call(key, 'POST', path, { model: 'sandbox-chat', [field]: 1e15, ...extra });
      assert.deepEqual(res, {
        status: 400,
        body: { error: `${field}: at most 4096 for model sandbox-chat, got 1000000000000000`, type: 'invalid_request_error' },
      });
    }
    const messages = await request(`${gw.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sandbox-chat', max_tokens: 4_097, messages: [{ role: 'user', content: 'x' }] }),
    });
    assert.deepEqual(
      { status: messages.statusCode, body: await messages.body.json() },
      { status: 400, body: { error: 'max_tokens: at most 4096 for model sandbox-chat, got 4097', type: 'invalid_request_error' } },
    );
    assert.deepEqual(await gw.balance(accountId), { ...(await gw.balance(accountId)), balance_micros: 10_000_000, held_micros: 0 });
    assert.equal((await gw.admin('GET', `/admin/accounts/${accountId}/ledger`)).body.data.length, 1, 'only the credit');
  });

  test('Idempotency-Key on a streamed call is refused with a 400 that says so, and nothing is charged', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 10_000_000 });
    const res = await gw.call(
      key,
      'POST',
      '/v1/chat/completions',
      { model: 'sandbox-chat', stream: true, messages: [{ role: 'user', content: 'x' }] },
      { 'idempotency-key': 'stream-1' },
    );
    assert.deepEqual(res, {
      status: 400,
      body: {
        error: 'Idempotency-Key: not supported on streamed calls; send it on a call that answers in one piece, or retry the stream without it',
        type: 'invalid_request_error',
      },
    });
    assert.equal((await gw.admin('GET', `/admin/accounts/${accountId}/ledger`)).body.data.length, 1);
  });

  test('a caller that leaves a stream before the upstream answered pays nothing: the hold is released in full', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 10_000_000 });
    const messages = [{ role: 'user', content: 'never mind' }];
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'chat', delay_ms: 1_000, times: 1 });
    await assert.rejects(
      request(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        signal: AbortSignal.timeout(200),
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'sandbox-chat', stream: true, max_tokens: 1_000, messages }),
      }),
    );
    const ledger = await eventually(async () => {
      const rows = (await gw.admin('GET', `/admin/accounts/${accountId}/ledger`)).body.data as { kind: string }[];
      return rows.length === 3 && rows;
    });
    assert.deepEqual(ledger.map((row) => row.kind).sort(), ['credit', 'hold', 'release']);
    assert.deepEqual((await gw.admin('GET', `/admin/accounts/${accountId}/usage`)).body.data, []);
    assert.equal((await gw.settled(accountId)).balance_micros, 10_000_000);
  });
});
