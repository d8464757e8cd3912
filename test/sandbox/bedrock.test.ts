// The sandbox's Bedrock Converse routes, called by the gateway's own bedrock adapter over a channel's pool:
// SigV4 checked, answers and streams as chat would count them, faults on the binary stream.
import assert from 'node:assert/strict';
import type { Readable } from 'node:stream';
import { after, before, beforeEach, test } from 'node:test';
import { buildConfig } from '../../src/config/load.js';
import { sandboxCatalogue } from '../../src/config/sandbox-catalogue.js';
import type { PivotEvent, PivotMessage, PivotRequest, PivotStreamDecoder } from '../../src/pivot/types.js';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.js';
import { bedrockAdapter } from '../../src/upstreams/bedrock/client.js';
import { signedHeaders } from '../../src/upstreams/bedrock/signing.js';
import { UpstreamHttpError } from '../../src/upstreams/http.js';
import { createUpstreams, type Upstreams } from '../../src/upstreams/pool.js';
import { addFault, clearSandbox, loggedRequests, postChat } from './sandbox-client.js';

let sandbox: Sandbox;
let upstreams: Upstreams;
before(async () => {
  sandbox = await startSandbox({ port: 0 });
  const channel = buildConfig({ ...sandboxCatalogue(sandbox.url) }).config.channels['sandbox-bedrock'];
  assert.ok(channel);
  upstreams = createUpstreams({
    bedrock: channel,
    'wrong-secret': { ...channel, secret_access_key: 'not-the-sandbox-secret' },
    'no-region': { ...channel, region: undefined },
  });
});
after(async () => {
  await upstreams.close();
  await sandbox.close();
});
beforeEach(() => clearSandbox(sandbox.url));

const ask = (text: string): PivotMessage => ({ role: 'user', content: [{ type: 'text', text }] });
const HELLO: PivotRequest = { model: 'sandbox-bedrock', system: ['Be brief.'], messages: [ask('hello there')], stream: false };
const TOOLS = [{ name: 'lookup', parameters: { type: 'object' } }];
const complete = (request: PivotRequest, channel = 'bedrock') => bedrockAdapter.complete(upstreams.get(channel), request, AbortSignal.timeout(5000));

type Step = PivotEvent | { type: 'cut' };

async function streamed(request: PivotRequest): Promise<Step[]> {
  const { body, decoder } = await bedrockAdapter.openStream(upstreams.get('bedrock'), { ...request, stream: true }, AbortSignal.timeout(5000));
  return eventsOf(body, decoder);
}

/** Every event of a body; `{type: 'cut'}` where the connection broke. */
async function eventsOf(body: Readable, decoder: PivotStreamDecoder): Promise<Step[]> {
  const events: Step[] = [];
  try {
    for await (const chunk of body) events.push(...decoder.push(chunk as Buffer));
  } catch {
    return [...events, { type: 'cut' }];
  }
  return [...events, ...decoder.end()];
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  assert.fail('expected a rejection');
}

test('a plain call answers the echo with usage, as the chat route answers the same conversation', async () => {
  const answer = await complete(HELLO);
  const chat = await postChat(sandbox.url, {
    model: 'sandbox-chat',
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'hello there' },
    ],
  });
  assert.deepEqual(answer, { text: 'Sandbox says: hello there', toolCalls: [], finish: 'stop', usage: { input: 6, output: 4 } });
  assert.deepEqual(
    [chat.body.choices[0].message.content, chat.body.usage.prompt_tokens, chat.body.usage.completion_tokens],
    ['Sandbox says: hello there', 6, 4],
  );
});

test('a stream sends one text delta per word, then the finish, the usage and the end', async () => {
  assert.deepEqual(await streamed(HELLO), [
    { type: 'text', text: 'Sandbox' },
    { type: 'text', text: ' says:' },
    { type: 'text', text: ' hello' },
    { type: 'text', text: ' there' },
    { type: 'finish', finish: 'stop' },
    { type: 'usage', usage: { input: 6, output: 4 } },
    { type: 'done' },
  ]);
});

test('a tool directive gets a tool call, whole or streamed, with the same id and arguments', async () => {
  const request: PivotRequest = { model: 'sandbox-bedrock', system: [], messages: [ask('weather in Paris [[tool:lookup]]')], stream: false, tools: TOOLS };
  const answer = await complete(request);
  const [call] = answer.toolCalls;
  assert.match(call?.id ?? '', /^tooluse_[0-9a-f]{24}$/);
  assert.deepEqual(answer, {
    text: '',
    toolCalls: [{ id: call?.id, name: 'lookup', arguments: '{"query":"weather in Paris"}' }],
    finish: 'tool_calls',
    usage: { input: 5, output: 4 },
  });
  const events = await streamed(request);
  const args = events.flatMap((e) => (e.type === 'tool_call' ? [e.arguments] : [])).join('');
  assert.deepEqual(
    [events[0], args, events.at(-3)],
    [{ type: 'tool_call', index: 0, id: call?.id, name: 'lookup', arguments: '' }, '{"query":"weather in Paris"}', { type: 'finish', finish: 'tool_calls' }],
  );
});

test('a tool round trip, merged into alternating turns, is accepted and counted as chat counts it', async () => {
  const args = '{"query":"weather in Paris"}';
  const messages: PivotMessage[] = [
    ask('weather in Paris'),
    { role: 'assistant', content: [], toolCalls: [{ id: 'tooluse_1', name: 'lookup', arguments: args }] },
    { role: 'tool', toolCallId: 'tooluse_1', name: 'lookup', content: [{ type: 'text', text: '15 degrees' }] },
    ask('thanks'),
  ];
  const answer = await complete({ model: 'sandbox-bedrock', system: [], messages, stream: false, tools: TOOLS });
  const chat = await postChat(sandbox.url, {
    model: 'sandbox-chat',
    messages: [
      { role: 'user', content: 'weather in Paris' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'tooluse_1', type: 'function', function: { name: 'lookup', arguments: args } }] },
      { role: 'tool', tool_call_id: 'tooluse_1', content: '15 degrees' },
      { role: 'user', content: 'thanks' },
    ],
    tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }],
  });
  assert.deepEqual([answer.text, answer.usage?.input], [chat.body.choices[0].message.content, chat.body.usage.prompt_tokens]);
});

test('a request signed with a wrong secret is refused with 403 and Bedrock’s message', async () => {
  const error = await rejection(complete(HELLO, 'wrong-secret'));
  assert.ok(error instanceof UpstreamHttpError);
  assert.deepEqual(
    [error.statusCode, error.reason()],
    [
      403,
      'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.',
    ],
  );
});

test('an unsigned request is refused with 403, its error type in x-amzn-errortype', async () => {
  const res = await fetch(`${sandbox.url}/model/sandbox-bedrock/converse`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ messages: [{ role: 'user', content: [{ text: 'hi' }] }] }),
  });
  assert.deepEqual(
    [res.status, res.headers.get('x-amzn-errortype'), await res.json()],
    [403, 'MissingAuthenticationTokenException', { message: 'Missing Authentication Token' }],
  );
});

test('a model id with ":" and "/" reaches the route intact, and its escaped path is signed as sent', async () => {
  const model = 'arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-3-5-sonnet-20240620-v1:0';
  // a fault rule selects on the model the route reads from its path: it matches only the id itself
  await addFault(sandbox.url, { model, status: 429, times: 1 });
  const refused = await rejection(complete({ ...HELLO, model }));
  const answer = await complete({ ...HELLO, model });
  const paths = (await loggedRequests(sandbox.url)).map((entry) => entry.path);
  assert.deepEqual(
    [(refused as UpstreamHttpError).statusCode, answer.text, paths[1]],
    [429, 'Sandbox says: hello there', `/model/${encodeURIComponent(model)}/converse`],
  );
});

test('an exception frame mid-stream gives an error event and no end', async () => {
  await addFault(sandbox.url, { kind: 'bedrock', error_after_chunks: 2 });
  assert.deepEqual(await streamed(HELLO), [
    { type: 'text', text: 'Sandbox' },
    { type: 'error', message: 'modelStreamErrorException: sandbox fault: error after 2 chunks' },
  ]);
});

test('a stream dropped after three frames breaks with what those frames carried', async () => {
  await addFault(sandbox.url, { kind: 'bedrock', drop_after_chunks: 3 });
  assert.deepEqual(await streamed(HELLO), [{ type: 'text', text: 'Sandbox' }, { type: 'text', text: ' says:' }, { type: 'cut' }]);
});

test('a conversation whose roles do not alternate is refused with 400 ValidationException', async () => {
  const turn = (text: string) => ({ role: 'user', content: [{ text }] });
  const body = JSON.stringify({ messages: [turn('one'), turn('two')] });
  const channel = upstreams.get('bedrock').channel;
  const res = await fetch(`${sandbox.url}/model/sandbox-bedrock/converse`, {
    method: 'POST',
    headers: await signedHeaders(channel, { path: '/model/sandbox-bedrock/converse', body }),
    body,
  });
  assert.deepEqual([res.status, res.headers.get('x-amzn-errortype')], [400, 'ValidationException']);
});

test('a channel without a region fails before any request, naming the field', async () => {
  const error = await rejection(complete(HELLO, 'no-region'));
  assert.match((error as Error).message, /region/);
});
