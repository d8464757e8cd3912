// Every price dimension billed end to end, with the official SDKs through the gateway to the sandbox,
// whose usage directives make each kind report cached reads, cache writes, reasoning and web searches
// in its own fields. Each call's usage row splits the usage into disjoint units, and the account pays
// each unit at its own price: ceil(count × price / 1e6) a token line, count × price a web search.
// The sandbox counts a one-message prompt as 1 plus its words and replies `Sandbox says: <those words>`.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

// Every dimension priced apart (micros per million tokens; a web search per search), so no unit falls back.
const PRICE = {
  input_token: 3_000_000,
  cached_input_token: 300_000,
  cache_write_token: 3_750_000,
  cache_write_1h_token: 6_000_000,
  output_token: 15_000_000,
  reasoning_token: 20_000_000,
  web_search: 500,
};
const CREDIT = 1_000_000;
// the hold is the prompt and this output cap at the dearest prices: far above every bill here
const MAX_TOKENS = 500;

/** The bill of `units`, every one priced in `price`. */
function billOf(units: Record<string, number>, price: Record<string, number>): number {
  let micros = 0;
  for (const [unit, count] of Object.entries(units)) {
    const perUnit = price[unit];
    assert.ok(perUnit !== undefined, `${unit} is priced`);
    micros += unit === 'web_search' ? count * perUnit : Math.ceil((count * perUnit) / 1_000_000);
  }
  return micros;
}

/** Words of a one-message prompt: the sandbox counts 1 more for the message, and replies with 2 more. */
const wordCount = (text: string) => text.split(' ').length;

// 5 words: 6 counted prompt tokens, a 7-word reply
const CACHING = 'hello [[cached:40]] [[cache_write:7]] [[cache_write_1h:5]] [[reasoning:11]]';
// 6 words: 7 counted prompt tokens, an 8-word reply
const SEARCHING = 'look [[cached:40]] [[cache_write:7]] [[cache_write_1h:5]] [[reasoning:11]] [[web_search:3]]';

let gw: TestGateway;
before(async () => {
  gw = await startTestGateway({
    models: {
      'priced-chat': { type: 'chat', channel: 'sandbox-openai', upstream_model: 'sandbox-chat', price: PRICE },
      'priced-claude': { type: 'chat', channel: 'sandbox-anthropic', upstream_model: 'sandbox-claude', price: PRICE },
      'priced-gemini': { type: 'chat', channel: 'sandbox-gemini', upstream_model: 'sandbox-gemini', price: PRICE },
      'priced-bedrock': { type: 'chat', channel: 'sandbox-bedrock', upstream_model: 'sandbox-bedrock', price: PRICE },
    },
  });
});
after(() => gw.close());

/** The call's usage row and what the account paid, once its hold has ended. */
async function billed(accountId: string, key: string): Promise<{ units: Record<string, number>; amount: number; paid: number }> {
  const { balance_micros: balance } = await gw.settled(accountId);
  const rows = (await gw.call(key, 'GET', '/v1/account/usage')).body.data;
  assert.equal(rows.length, 1);
  return { units: rows[0].units, amount: rows[0].amount_micros, paid: CREDIT - balance };
}

const openai = (key: string) => new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
const anthropic = (key: string) => new Anthropic({ apiKey: key, baseURL: gw.url, maxRetries: 0 });
const chatParams = (model: string, text: string) => ({ model, max_tokens: MAX_TOKENS, messages: [{ role: 'user' as const, content: text }] });

// chat reports 5-minute and 1-hour writes together, as plain cache writes
const CHAT_UNITS = {
  input_token: 1 + wordCount(CACHING),
  cached_input_token: 40,
  cache_write_token: 7 + 5,
  output_token: 2 + wordCount(CACHING),
  reasoning_token: 11,
};

test('an OpenAI chat call with cached reads, cache writes and reasoning is billed each unit at its own price', async () => {
  const { accountId, key } = await gw.account({ creditMicros: CREDIT });
  await openai(key).chat.completions.create(chatParams('priced-chat', CACHING));
  const { units, amount, paid } = await billed(accountId, key);
  assert.deepEqual({ units, amount, paid }, { units: CHAT_UNITS, amount: billOf(CHAT_UNITS, PRICE), paid: billOf(CHAT_UNITS, PRICE) });
});

test('a streamed OpenAI chat call is billed the same units as the plain call', async () => {
  const { accountId, key } = await gw.account({ creditMicros: CREDIT });
  await openai(key)
    .chat.completions.stream({ ...chatParams('priced-chat', CACHING), stream_options: { include_usage: true } })
    .finalChatCompletion();
  const { units, amount, paid } = await billed(accountId, key);
  assert.deepEqual({ units, amount, paid }, { units: CHAT_UNITS, amount: billOf(CHAT_UNITS, PRICE), paid: billOf(CHAT_UNITS, PRICE) });
});

// Anthropic splits writes by lifetime and counts thinking in output_tokens (the reply's 8 words and 11 of reasoning)
const CLAUDE_UNITS = {
  input_token: 1 + wordCount(SEARCHING),
  cached_input_token: 40,
  cache_write_token: 7,
  cache_write_1h_token: 5,
  output_token: 2 + wordCount(SEARCHING) + 11,
  web_search: 3,
};

test('an Anthropic messages call is billed its cache reads, both write lifetimes and its web searches at their own prices', async () => {
  const { accountId, key } = await gw.account({ creditMicros: CREDIT });
  await anthropic(key).messages.create(chatParams('priced-claude', SEARCHING));
  const { units, amount, paid } = await billed(accountId, key);
  assert.deepEqual({ units, amount, paid }, { units: CLAUDE_UNITS, amount: billOf(CLAUDE_UNITS, PRICE), paid: billOf(CLAUDE_UNITS, PRICE) });
});

test('a streamed Anthropic messages call is billed the same units as the plain call', async () => {
  const { accountId, key } = await gw.account({ creditMicros: CREDIT });
  await anthropic(key).messages.stream(chatParams('priced-claude', SEARCHING)).finalMessage();
  const { units, amount, paid } = await billed(accountId, key);
  assert.deepEqual({ units, amount, paid }, { units: CLAUDE_UNITS, amount: billOf(CLAUDE_UNITS, PRICE), paid: billOf(CLAUDE_UNITS, PRICE) });
});

// 3 words: 4 counted prompt tokens, a 5-word reply; Gemini has no field for cache writes
const THINKING = 'hello [[cached:40]] [[reasoning:11]]';
const GEMINI_UNITS = { input_token: 1 + wordCount(THINKING), cached_input_token: 40, output_token: 2 + wordCount(THINKING), reasoning_token: 11 };

test('a Gemini generateContent call is billed its cached content and its thoughts at their own prices', async () => {
  const { accountId, key } = await gw.account({ creditMicros: CREDIT });
  const ai = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: gw.url, apiVersion: 'v1beta' } });
  await ai.models.generateContent({ model: 'priced-gemini', contents: THINKING, config: { maxOutputTokens: MAX_TOKENS } });
  const { units, amount, paid } = await billed(accountId, key);
  assert.deepEqual({ units, amount, paid }, { units: GEMINI_UNITS, amount: billOf(GEMINI_UNITS, PRICE), paid: billOf(GEMINI_UNITS, PRICE) });
});

test('a streamed Gemini call is billed the same units as the plain call', async () => {
  const { accountId, key } = await gw.account({ creditMicros: CREDIT });
  const ai = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: gw.url, apiVersion: 'v1beta' } });
  for await (const _chunk of await ai.models.generateContentStream({ model: 'priced-gemini', contents: THINKING, config: { maxOutputTokens: MAX_TOKENS } })) {
    // read to the end
  }
  const { units, amount, paid } = await billed(accountId, key);
  assert.deepEqual({ units, amount, paid }, { units: GEMINI_UNITS, amount: billOf(GEMINI_UNITS, PRICE), paid: billOf(GEMINI_UNITS, PRICE) });
});

// Bedrock reports both write lifetimes in one field, and reasoning within outputTokens
const BEDROCK_UNITS = {
  input_token: 1 + wordCount(CACHING),
  cached_input_token: 40,
  cache_write_token: 7 + 5,
  output_token: 2 + wordCount(CACHING) + 11,
};

test('a Bedrock model called with the chat API is billed its cache reads and writes at their own prices', async () => {
  const { accountId, key } = await gw.account({ creditMicros: CREDIT });
  await openai(key).chat.completions.create(chatParams('priced-bedrock', CACHING));
  const { units, amount, paid } = await billed(accountId, key);
  assert.deepEqual({ units, amount, paid }, { units: BEDROCK_UNITS, amount: billOf(BEDROCK_UNITS, PRICE), paid: billOf(BEDROCK_UNITS, PRICE) });
});

test('a Bedrock model streamed through the chat API is billed the same units as the plain call', async () => {
  const { accountId, key } = await gw.account({ creditMicros: CREDIT });
  await openai(key)
    .chat.completions.stream({ ...chatParams('priced-bedrock', CACHING), stream_options: { include_usage: true } })
    .finalChatCompletion();
  const { units, amount, paid } = await billed(accountId, key);
  assert.deepEqual({ units, amount, paid }, { units: BEDROCK_UNITS, amount: billOf(BEDROCK_UNITS, PRICE), paid: billOf(BEDROCK_UNITS, PRICE) });
});

// responses has no field for cache writes
const RESPONSES_UNITS = { input_token: 1 + wordCount(CACHING), cached_input_token: 40, output_token: 2 + wordCount(CACHING), reasoning_token: 11 };

test('an OpenAI responses call is billed its cached input and its reasoning at their own prices', async () => {
  const { accountId, key } = await gw.account({ creditMicros: CREDIT });
  await openai(key).responses.create({ model: 'priced-chat', input: CACHING, max_output_tokens: MAX_TOKENS });
  const { units, amount, paid } = await billed(accountId, key);
  assert.deepEqual({ units, amount, paid }, { units: RESPONSES_UNITS, amount: billOf(RESPONSES_UNITS, PRICE), paid: billOf(RESPONSES_UNITS, PRICE) });
});

test('a streamed OpenAI responses call is billed the same units as the plain call', async () => {
  const { accountId, key } = await gw.account({ creditMicros: CREDIT });
  await openai(key).responses.stream({ model: 'priced-chat', input: CACHING, max_output_tokens: MAX_TOKENS }).finalResponse();
  const { units, amount, paid } = await billed(accountId, key);
  assert.deepEqual({ units, amount, paid }, { units: RESPONSES_UNITS, amount: billOf(RESPONSES_UNITS, PRICE), paid: billOf(RESPONSES_UNITS, PRICE) });
});

test('the chat API on an Anthropic model shows the cache reads in prompt_tokens_details and bills as the messages call does', async () => {
  const { accountId, key } = await gw.account({ creditMicros: CREDIT });
  const completion = await openai(key).chat.completions.create(chatParams('priced-claude', SEARCHING));
  const { paid } = await billed(accountId, key);
  assert.deepEqual(
    { prompt: completion.usage?.prompt_tokens, cached: completion.usage?.prompt_tokens_details?.cached_tokens, paid },
    { prompt: 1 + wordCount(SEARCHING) + 40 + 7 + 5, cached: 40, paid: billOf(CLAUDE_UNITS, PRICE) },
  );
});

test('the chat API streaming an Anthropic model bills as the messages call does', async () => {
  const { accountId, key } = await gw.account({ creditMicros: CREDIT });
  await openai(key)
    .chat.completions.stream({ ...chatParams('priced-claude', SEARCHING), stream_options: { include_usage: true } })
    .finalChatCompletion();
  const { units, paid } = await billed(accountId, key);
  assert.deepEqual({ units, paid }, { units: CLAUDE_UNITS, paid: billOf(CLAUDE_UNITS, PRICE) });
});

test('the messages API on an OpenAI model shows the cache reads and writes beside the uncached input and bills as the chat call does', async () => {
  const { accountId, key } = await gw.account({ creditMicros: CREDIT });
  const message = await anthropic(key).messages.create(chatParams('priced-chat', CACHING));
  const { paid } = await billed(accountId, key);
  const { input_tokens: input, cache_read_input_tokens: read, cache_creation_input_tokens: written } = message.usage;
  assert.deepEqual({ input, read, written, paid }, { input: 1 + wordCount(CACHING), read: 40, written: 7 + 5, paid: billOf(CHAT_UNITS, PRICE) });
});
