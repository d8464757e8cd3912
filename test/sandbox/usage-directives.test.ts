// The usage directives of a prompt (`[[cached:N]]`, `[[cache_write:N]]`, `[[cache_write_1h:N]]`,
// `[[reasoning:N]]`, `[[web_search:N]]`): each kind reports them in its own usage fields, plain and
// streamed alike. Counts: the sandbox counts 1 per message plus its words, and replies
// `Sandbox says: <the user's words>` (2 words more than the prompt's).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { buildConfig } from '../../src/config/load.js';
import { sandboxCatalogue } from '../../src/config/sandbox-catalogue.js';
import type { ChannelConfig } from '../../src/config/schema.js';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.js';
import { usageDirectives } from '../../src/sandbox/text.js';
import { signedHeaders } from '../../src/upstreams/bedrock/signing.js';
import { ANTHROPIC, parseSse, postChat, postTo, streamChat, streamNamed } from './sandbox-client.js';

let sandbox: Sandbox;
let bedrockChannel: ChannelConfig;
before(async () => {
  sandbox = await startSandbox({ port: 0 });
  bedrockChannel = buildConfig({ ...sandboxCatalogue(sandbox.url) }).config.channels['sandbox-bedrock'] as ChannelConfig;
});
after(() => sandbox.close());

/** The counted prompt of one user message: 1 for the message, 1 per word. */
const counted = (text: string) => 1 + text.split(' ').length;
/** The sandbox's reply to it: `Sandbox says:` and the prompt's words. */
const replied = (text: string) => 2 + text.split(' ').length;

// 5 words: 6 counted prompt tokens, a 7-word reply
const CACHING = 'hello [[cached:40]] [[cache_write:7]] [[cache_write_1h:5]] [[reasoning:11]]';
const SEARCHING = 'look [[cached:40]] [[cache_write:7]] [[cache_write_1h:5]] [[reasoning:11]] [[web_search:3]]';
const user = (text: string) => [{ role: 'user', content: text }];

test('usageDirectives reads each directive, the first of a name counting, and is undefined without any', () => {
  assert.deepEqual(
    [usageDirectives('a [[cached:4]] [[cached:9]] [[cache_write_1h:2]] [[web_search:1]]'), usageDirectives('[[words:3]] hello')],
    [{ cached: 4, cacheWrite: 0, cacheWrite1h: 2, reasoning: 0, webSearch: 1 }, undefined],
  );
});

test('a count of more than nine digits is no directive', () => {
  assert.equal(usageDirectives('[[cached:1234567890]]'), undefined);
});

test('chat adds cached reads and both kinds of writes to prompt_tokens and tells them apart in prompt_tokens_details', async () => {
  const { body } = await postChat(sandbox.url, { model: 'm', messages: user(CACHING) });
  const prompt = counted(CACHING) + 40 + 7 + 5;
  assert.deepEqual([body.usage.prompt_tokens, body.usage.prompt_tokens_details], [prompt, { cached_tokens: 40, audio_tokens: 0, cache_write_tokens: 12 }]);
});

test('chat adds reasoning to completion_tokens and reports it in completion_tokens_details', async () => {
  const { body } = await postChat(sandbox.url, { model: 'm', messages: user(CACHING) });
  const completion = replied(CACHING) + 11;
  assert.deepEqual(
    [body.usage.completion_tokens, body.usage.completion_tokens_details, body.usage.total_tokens],
    [
      completion,
      { reasoning_tokens: 11, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
      counted(CACHING) + 40 + 7 + 5 + completion,
    ],
  );
});

test('chat reports no cache_write_tokens when nothing was written', async () => {
  const { body } = await postChat(sandbox.url, { model: 'm', messages: user('hi [[cached:8]]') });
  assert.deepEqual(body.usage.prompt_tokens_details, { cached_tokens: 8, audio_tokens: 0 });
});

test('a chat stream with include_usage reports the plain call usage in its usage chunk', async () => {
  const request = { model: 'm', messages: user(CACHING) };
  const plain = await postChat(sandbox.url, request);
  const { events } = await streamChat(sandbox.url, { ...request, stream_options: { include_usage: true } });
  assert.deepEqual(events.at(-2).usage, plain.body.usage);
});

test('chat ignores web searches: the usage is that of the same directives without one', async () => {
  const withSearch = await postChat(sandbox.url, { model: 'm', messages: user('hi [[cached:8]] [[web_search:3]]') });
  const without = await postChat(sandbox.url, { model: 'm', messages: user('hi [[cached:8]] [[reasoning:0]]') });
  assert.deepEqual(withSearch.body.usage, without.body.usage);
});

const messagesUrl = () => `${sandbox.url}/v1/messages`;
const messagesRequest = (text: string) => ({ model: 'claude', max_tokens: 100, messages: user(text) });

test('messages reports the uncached prompt in input_tokens, reads and writes beside it, the writes split by lifetime', async () => {
  const { body } = await postTo(messagesUrl(), messagesRequest(CACHING), ANTHROPIC);
  assert.deepEqual(body.usage, {
    input_tokens: counted(CACHING),
    cache_creation_input_tokens: 12,
    cache_read_input_tokens: 40,
    cache_creation: { ephemeral_5m_input_tokens: 7, ephemeral_1h_input_tokens: 5 },
    output_tokens: replied(CACHING) + 11,
  });
});

test('messages reports web searches in server_tool_use', async () => {
  const { body } = await postTo(messagesUrl(), messagesRequest(SEARCHING), ANTHROPIC);
  assert.deepEqual(body.usage.server_tool_use, { web_search_requests: 3 });
});

test('a messages stream opens with the cache counts and closes with the output and the web searches', async () => {
  const { events } = await streamNamed(messagesUrl(), messagesRequest(SEARCHING), ANTHROPIC);
  const start = events.find((e) => e.type === 'message_start').message.usage;
  const delta = events.find((e) => e.type === 'message_delta').usage;
  assert.deepEqual(
    [start, delta],
    [
      {
        input_tokens: counted(SEARCHING),
        cache_creation_input_tokens: 12,
        cache_read_input_tokens: 40,
        cache_creation: { ephemeral_5m_input_tokens: 7, ephemeral_1h_input_tokens: 5 },
        output_tokens: 1,
      },
      { output_tokens: replied(SEARCHING) + 11, server_tool_use: { web_search_requests: 3 } },
    ],
  );
});

const GEMINI_KEY = { 'x-goog-api-key': 'k', 'content-type': 'application/json' };
const geminiRequest = (text: string) => ({ contents: [{ role: 'user', parts: [{ text }] }] });

test('Gemini counts cached reads in promptTokenCount and reports thoughts beside the candidates, leaving out cache writes', async () => {
  const { body } = await postTo(`${sandbox.url}/v1beta/models/g:generateContent`, geminiRequest(CACHING), GEMINI_KEY);
  const prompt = counted(CACHING) + 40;
  assert.deepEqual(body.usageMetadata, {
    promptTokenCount: prompt,
    candidatesTokenCount: replied(CACHING),
    totalTokenCount: prompt + replied(CACHING) + 11,
    cachedContentTokenCount: 40,
    thoughtsTokenCount: 11,
  });
});

test("a Gemini stream's last chunk carries the plain call usage", async () => {
  const plain = await postTo(`${sandbox.url}/v1beta/models/g:generateContent`, geminiRequest(CACHING), GEMINI_KEY);
  const res = await fetch(`${sandbox.url}/v1beta/models/g:streamGenerateContent?alt=sse`, {
    method: 'POST',
    headers: GEMINI_KEY,
    body: JSON.stringify(geminiRequest(CACHING)),
  });
  const chunks = parseSse(await res.text());
  assert.deepEqual(chunks.at(-1).usageMetadata, plain.body.usageMetadata);
});

async function converse(text: string, stream: boolean): Promise<Response> {
  const path = `/model/sandbox-bedrock/${stream ? 'converse-stream' : 'converse'}`;
  const body = JSON.stringify({ messages: [{ role: 'user', content: [{ text }] }] });
  return fetch(`${sandbox.url}${path}`, { method: 'POST', headers: await signedHeaders(bedrockChannel, { path, body }), body });
}

/** The payloads of an event stream's frames, with their event types. */
function framesOf(bytes: Uint8Array): { type: unknown; payload: any }[] {
  const codec = new EventStreamCodec(toUtf8, fromUtf8);
  const frames = [];
  for (let at = 0; at < bytes.byteLength; ) {
    const length = new DataView(bytes.buffer, bytes.byteOffset + at, 4).getUint32(0);
    const message = codec.decode(bytes.subarray(at, at + length));
    frames.push({ type: message.headers[':event-type']?.value, payload: JSON.parse(toUtf8(message.body)) });
    at += length;
  }
  return frames;
}

test('Converse reports the uncached prompt in inputTokens, reads and writes of both lifetimes beside it, reasoning within outputTokens', async () => {
  const { usage } = (await (await converse(CACHING, false)).json()) as any;
  const output = replied(CACHING) + 11;
  assert.deepEqual(usage, {
    inputTokens: counted(CACHING),
    outputTokens: output,
    totalTokens: counted(CACHING) + 40 + 12 + output,
    cacheReadInputTokens: 40,
    cacheWriteInputTokens: 12,
  });
});

test("ConverseStream's metadata event carries the plain call usage", async () => {
  const { usage } = (await (await converse(CACHING, false)).json()) as any;
  const frames = framesOf(new Uint8Array(await (await converse(CACHING, true)).arrayBuffer()));
  const metadata = frames.find((frame) => frame.type === 'metadata');
  assert.deepEqual(metadata?.payload.usage, usage);
});

const responsesRequest = (text: string) => ({ model: 'm', input: text });
const AUTH_JSON = { authorization: 'Bearer sk-test', 'content-type': 'application/json' };

test('responses counts cached reads in input_tokens and reasoning in output_tokens, leaving out cache writes', async () => {
  const { body } = await postTo(`${sandbox.url}/v1/responses`, responsesRequest(CACHING), AUTH_JSON);
  const input = counted(CACHING) + 40;
  const output = replied(CACHING) + 11;
  assert.deepEqual(body.usage, {
    input_tokens: input,
    input_tokens_details: { cached_tokens: 40 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: 11 },
    total_tokens: input + output,
  });
});

test("a responses stream's response.completed carries the plain call usage", async () => {
  const plain = await postTo(`${sandbox.url}/v1/responses`, responsesRequest(CACHING), AUTH_JSON);
  const { events } = await streamNamed(`${sandbox.url}/v1/responses`, responsesRequest(CACHING), AUTH_JSON);
  assert.deepEqual(events.find((e) => e.type === 'response.completed').response.usage, plain.body.usage);
});
