// POST /v1/messages/count_tokens with the official @anthropic-ai/sdk (messages.countTokens): free,
// rate-limited, and answered by the upstream where it counts, else by the gateway's tokenizer.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const PARAMS = {
  system: 'You are terse.',
  messages: [{ role: 'user' as const, content: 'how many tokens is this question' }],
};

describe('messages count_tokens', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway();
  });
  after(() => gw.close());
  beforeEach(async () => {
    await gw.sandboxControl('DELETE', '/__sandbox/faults');
    await gw.sandboxControl('DELETE', '/__sandbox/requests');
  });

  const client = (key: string) => new Anthropic({ apiKey: key, baseURL: gw.url, maxRetries: 0 });
  const upstreamCalls = async (path: string) =>
    ((await gw.sandboxControl('GET', '/__sandbox/requests')).data as { path: string; body: { model?: string } }[]).filter((r) => r.path === path);

  test('on a messages-native model the count is the upstream’s, asked with the channel’s model, and costs nothing', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    const counted = await client(key).messages.countTokens({ model: 'sandbox-claude', ...PARAMS });
    // what the same request is billed for by the upstream: its usage's input_tokens
    const message = await client(key).messages.create({ model: 'sandbox-claude', max_tokens: 50, ...PARAMS });
    assert.equal(counted.input_tokens, message.usage.input_tokens);
    const [sent] = await upstreamCalls('/v1/messages/count_tokens');
    assert.equal(sent?.body.model, 'sandbox-claude');
    const bill = message.usage.input_tokens * 2 + message.usage.output_tokens * 8;
    assert.equal((await gw.settled(accountId)).balance_micros, 1_000_000 - bill);
  });

  test('on an OpenAI-style model the gateway counts with its tokenizer, and nothing goes upstream', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    const counted = await client(key).messages.countTokens({ model: 'sandbox-chat', ...PARAMS });
    assert.ok(counted.input_tokens > 5 && counted.input_tokens < 40, `counted ${counted.input_tokens}`);
    assert.deepEqual(await upstreamCalls('/v1/messages/count_tokens'), []);
    assert.equal((await gw.settled(accountId)).balance_micros, 1_000_000);
  });

  test('a longer conversation counts more tokens', async () => {
    const { key } = await gw.account();
    const short = await client(key).messages.countTokens({ model: 'sandbox-chat', ...PARAMS });
    const longer = await client(key).messages.countTokens({
      model: 'sandbox-chat',
      ...PARAMS,
      messages: [...PARAMS.messages, { role: 'assistant', content: 'quite a few' }, { role: 'user', content: 'count them all again please' }],
    });
    assert.ok(longer.input_tokens > short.input_tokens);
  });

  test('on a gemini model the count is the upstream’s countTokens of the translated request', async () => {
    const { key } = await gw.account();
    const counted = await client(key).messages.countTokens({ model: 'sandbox-gemini', ...PARAMS });
    const sent = (await gw.sandboxControl('GET', '/__sandbox/requests')).data as { path: string }[];
    assert.ok(sent.some((r) => r.path.endsWith(':countTokens')));
    assert.ok(counted.input_tokens > 0);
  });

  test('a key past its requests per minute is refused with 429', async () => {
    const { key } = await gw.account({ rpm: 1 });
    await client(key).messages.countTokens({ model: 'sandbox-chat', ...PARAMS });
    await assert.rejects(client(key).messages.countTokens({ model: 'sandbox-chat', ...PARAMS }), (error: { status?: number }) => error.status === 429);
  });

  test('a request without messages is a 400 naming the field', async () => {
    const { key } = await gw.account();
    const { status, body } = await gw.call(key, 'POST', '/v1/messages/count_tokens', { model: 'sandbox-claude' });
    assert.equal(status, 400);
    assert.match(body.error, /messages/);
  });

  test('an upstream that fails its count is a 502 and nothing is charged', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'count_tokens', status: 500, times: 1 });
    await assert.rejects(client(key).messages.countTokens({ model: 'sandbox-claude', ...PARAMS }), (error: { status?: number }) => error.status === 502);
    assert.equal((await gw.settled(accountId)).balance_micros, 1_000_000);
  });
});
