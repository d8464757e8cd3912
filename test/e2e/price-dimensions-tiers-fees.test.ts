// A long-context tier, a request fee and a web search fee, billed end to end with the official SDKs
// through the gateway to the sandbox (its usage directives report cached reads and web searches).
// The sandbox counts a one-message prompt as 1 plus its words and replies `Sandbox says: <those words>`.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

// Past a prompt of 50 tokens (cached ones included) the tier's prices replace the base ones.
const BASE = { input_token: 1_000_000, output_token: 4_000_000 };
const TIER = { input_token: 2_000_000, output_token: 8_000_000 };
// A cached read the model does not price apart falls back to the input price in force.
const BASE_WITH_CACHE = { ...BASE, cached_input_token: BASE.input_token };
const TIER_WITH_CACHE = { ...TIER, cached_input_token: TIER.input_token };
const FEES = { input_token: 1_000_000, output_token: 2_000_000, call: 2_500, web_search: 400 };
const CREDIT = 1_000_000;
const MAX_TOKENS = 1_000;

/** The bill of `units` at `price`: token lines per million rounded up, a call and a web search per unit. */
function billOf(units: Record<string, number>, price: Record<string, number>): number {
  let micros = 0;
  for (const [unit, count] of Object.entries(units)) {
    const perUnit = price[unit];
    assert.ok(perUnit !== undefined, `${unit} is priced`);
    micros += unit === 'call' || unit === 'web_search' ? count * perUnit : Math.ceil((count * perUnit) / 1_000_000);
  }
  return micros;
}

let gw: TestGateway;
before(async () => {
  gw = await startTestGateway({
    models: {
      'tiered-chat': {
        type: 'chat',
        channel: 'sandbox-openai',
        upstream_model: 'sandbox-chat',
        price: { ...BASE, tiers: [{ above_input_tokens: 50, ...TIER }] },
      },
      'fee-claude': { type: 'chat', channel: 'sandbox-anthropic', upstream_model: 'sandbox-claude', price: FEES },
    },
  });
});
after(() => gw.close());

async function billed(accountId: string, key: string): Promise<{ units: Record<string, number>; paid: number }> {
  const { balance_micros: balance } = await gw.settled(accountId);
  const rows = (await gw.call(key, 'GET', '/v1/account/usage')).body.data;
  assert.equal(rows.length, 1);
  return { units: rows[0].units, paid: CREDIT - balance };
}

async function chat(model: string, text: string) {
  const { accountId, key } = await gw.account({ creditMicros: CREDIT });
  const client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  await client.chat.completions.create({ model, max_tokens: MAX_TOKENS, messages: [{ role: 'user', content: text }] });
  return billed(accountId, key);
}

test('a prompt past the tier threshold with its cached tokens is billed at the tier prices', async () => {
  // 3 counted + 60 cached = 63 prompt tokens; a 4-word reply
  const units = { input_token: 3, cached_input_token: 60, output_token: 4 };
  assert.deepEqual(await chat('tiered-chat', 'long [[cached:60]]'), { units, paid: billOf(units, TIER_WITH_CACHE) });
});

test('a prompt below the tier threshold with its cached tokens is billed at the base prices', async () => {
  // 3 counted + 40 cached = 43 prompt tokens
  const units = { input_token: 3, cached_input_token: 40, output_token: 4 };
  assert.deepEqual(await chat('tiered-chat', 'short [[cached:40]]'), { units, paid: billOf(units, BASE_WITH_CACHE) });
});

test('a prompt of exactly the tier threshold is billed at the base prices', async () => {
  // 3 counted + 47 cached = 50 prompt tokens: not above 50
  const units = { input_token: 3, cached_input_token: 47, output_token: 4 };
  assert.deepEqual(await chat('tiered-chat', 'edge [[cached:47]]'), { units, paid: billOf(units, BASE_WITH_CACHE) });
});

test('a model with a request fee bills it once as the unit call: 1', async () => {
  const { accountId, key } = await gw.account({ creditMicros: CREDIT });
  const client = new Anthropic({ apiKey: key, baseURL: gw.url, maxRetries: 0 });
  await client.messages.create({ model: 'fee-claude', max_tokens: MAX_TOKENS, messages: [{ role: 'user', content: 'hello there' }] });
  // 2 words: 3 counted prompt tokens, a 4-word reply
  const units = { input_token: 3, output_token: 4, call: 1 };
  assert.deepEqual(await billed(accountId, key), { units, paid: billOf(units, FEES) });
});

test('the web searches an Anthropic upstream ran are billed as the unit web_search at its price', async () => {
  const { accountId, key } = await gw.account({ creditMicros: CREDIT });
  const client = new Anthropic({ apiKey: key, baseURL: gw.url, maxRetries: 0 });
  await client.messages.create({ model: 'fee-claude', max_tokens: MAX_TOKENS, messages: [{ role: 'user', content: 'search [[web_search:2]]' }] });
  const units = { input_token: 3, output_token: 4, web_search: 2, call: 1 };
  assert.deepEqual(await billed(accountId, key), { units, paid: billOf(units, FEES) });
});
