// A streamed /v1/messages on an OpenAI-style upstream is billed on the upstream's usage, as the
// plain call is (DESIGN §5): the official SDK's final message, the plain call's usage and the usage
// record all agree, however far the gateway's own count of a long prompt is from the upstream's.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { postForEvents } from '../helpers/sse.js';

// sandbox-chat's price: 2 micros an input token, 8 an output token.
const bill = (usage: { input_tokens: number; output_tokens: number }) => usage.input_tokens * 2 + usage.output_tokens * 8;
// About 2 000 words that the gateway's tokenizer counts far higher than the sandbox upstream does.
const LONG_PROMPT = Array.from({ length: 2_000 }, (_, i) => `term${i * 7919}`).join(' ');
const params = { model: 'sandbox-chat', max_tokens: 100, messages: [{ role: 'user' as const, content: LONG_PROMPT }] };

let gw: TestGateway;
before(async () => {
  gw = await startTestGateway();
});
after(() => gw.close());

const client = (key: string) => new Anthropic({ apiKey: key, baseURL: gw.url, maxRetries: 0 });

/** The account's usage records, oldest first, once every hold has ended. */
async function usageRecords(accountId: string): Promise<{ units: { input_token: number; output_token: number }; amount_micros: number; endpoint: string }[]> {
  await gw.settled(accountId);
  return (await gw.admin('GET', `/admin/accounts/${accountId}/usage`)).body.data.reverse();
}

test('a long prompt streamed through the SDK has the plain call usage in its final message, and both are billed that usage', async () => {
  const { accountId, key } = await gw.account({ creditMicros: 10_000_000 });
  const plain = await client(key).messages.create(params);
  const streamed = await client(key).messages.stream(params).finalMessage();
  assert.deepEqual(
    { input_tokens: streamed.usage.input_tokens, output_tokens: streamed.usage.output_tokens },
    { input_tokens: plain.usage.input_tokens, output_tokens: plain.usage.output_tokens },
  );
  const records = await usageRecords(accountId);
  assert.equal(records.length, 2);
  for (const record of records) {
    assert.deepEqual(record.units, { input_token: plain.usage.input_tokens, output_token: plain.usage.output_tokens });
    assert.equal(record.amount_micros, bill(plain.usage));
  }
  assert.equal((await gw.balance(accountId)).balance_micros, 10_000_000 - 2 * bill(plain.usage));
});

test('the translated stream opens with the gateway estimate of the prompt and closes with the upstream count it is billed on', async () => {
  const { accountId, key } = await gw.account({ creditMicros: 10_000_000 });
  const { events } = await postForEvents(`${gw.url}/v1/messages`, { ...params, stream: true }, { 'x-api-key': key, 'anthropic-version': '2023-06-01' });
  const opening = events.find((e) => e.event === 'message_start')!.data.message.usage;
  const closing = events.find((e) => e.event === 'message_delta')!.data.usage;
  const [record] = await usageRecords(accountId);
  assert.ok(
    opening.input_tokens > closing.input_tokens,
    `the estimate ${opening.input_tokens} is the gateway's own, above the upstream's ${closing.input_tokens}`,
  );
  assert.deepEqual(record!.units, { input_token: closing.input_tokens, output_token: closing.output_tokens });
  assert.equal(record!.amount_micros, bill(closing));
});
