// geminiAdapter against a started sandbox, on a Gemini API channel (a key) and on a Vertex AI one
// (the sandbox's service account, its tokens from the sandbox's /token): whole answers, streams
// read by the decoder, tool calls, and the sandbox's refusals and faults as UpstreamHttpError.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import type { Readable } from 'node:stream';
import { after, afterEach, before, test } from 'node:test';
import type { ChannelConfig } from '../../../src/config/schema.js';
import type { PivotEvent, PivotRequest, PivotStreamDecoder } from '../../../src/pivot/types.js';
import { type Sandbox, startSandbox } from '../../../src/sandbox/server.js';
import { hashOf } from '../../../src/sandbox/text.js';
import { sandboxServiceAccount } from '../../../src/sandbox/vertex-account.js';
import { geminiAdapter } from '../../../src/upstreams/gemini/adapter.js';
import { geminiRequestOf } from '../../../src/upstreams/gemini/to-upstream.js';
import { UpstreamHttpError } from '../../../src/upstreams/http.js';
import { createUpstreams, type Upstreams } from '../../../src/upstreams/pool.js';
import { addFault, clearSandbox, loggedRequests } from '../../sandbox/sandbox-client.js';

let sandbox: Sandbox;
let upstreams: Upstreams;

const channelOf = (base: string, auth: Partial<ChannelConfig>): ChannelConfig => ({
  kind: 'gemini',
  base_url: base,
  connections: 4,
  connection_wait_ms: 1000,
  timeouts: { connect_ms: 1000, headers_ms: 5000, body_ms: 5000 },
  ...auth,
});

const vertexOf = (account: object) => ({ vertex: { project: 'sandbox-project', region: 'us-central1', service_account_json: JSON.stringify(account) } });

before(async () => {
  sandbox = await startSandbox();
  const { privateKey: otherKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  const account = sandboxServiceAccount(`${sandbox.url}/token`);
  upstreams = createUpstreams({
    studio: channelOf(sandbox.url, { api_key: 'k' }),
    vertex: channelOf(sandbox.url, vertexOf(account)),
    keyless: channelOf(sandbox.url, {}),
    // the sandbox account's address with another key: a grant Google would refuse
    impostor: channelOf(sandbox.url, vertexOf({ ...account, private_key: otherKey })),
  });
});
afterEach(() => clearSandbox(sandbox.url));
after(async () => {
  await upstreams.close();
  await sandbox.close();
});

const signal = () => AbortSignal.timeout(10_000);
const ask = (text: string, fields: Partial<PivotRequest> = {}): PivotRequest => ({
  model: 'gemini-2.5-flash',
  system: [],
  messages: [{ role: 'user', content: [{ type: 'text', text }] }],
  stream: false,
  ...fields,
});
const weatherTool = { name: 'get_weather', description: 'The weather in a city', parameters: { type: 'object', properties: { query: { type: 'string' } } } };

async function decodeAll({ body, decoder }: { body: Readable; decoder: PivotStreamDecoder }): Promise<PivotEvent[]> {
  const events: PivotEvent[] = [];
  for await (const chunk of body) events.push(...decoder.push(chunk as Buffer));
  return [...events, ...decoder.end()];
}

async function assertHttpError(call: Promise<unknown>, status: number): Promise<UpstreamHttpError> {
  const error = await call.then(
    () => assert.fail('the call succeeded'),
    (error: unknown) => error,
  );
  assert.ok(error instanceof UpstreamHttpError, String(error));
  assert.equal(error.statusCode, status);
  return error;
}

for (const channel of ['studio', 'vertex'] as const) {
  test(`${channel}: a plain call answers the sandbox's text with its id and usage`, async () => {
    const request = ask('hello there');
    // 1 for the turn and 2 words in; 'Sandbox says: hello there' out
    assert.deepEqual(await geminiAdapter.complete(upstreams.get(channel), request, signal()), {
      id: hashOf(geminiRequestOf(request)),
      text: 'Sandbox says: hello there',
      toolCalls: [],
      finish: 'stop',
      usage: { input: 3, output: 4 },
    });
  });

  test(`${channel}: a stream read by the decoder is the answer word by word, then finish, usage and done`, async () => {
    const stream = await geminiAdapter.openStream(upstreams.get(channel), ask('hello there', { stream: true }), signal());
    assert.deepEqual(await decodeAll(stream), [
      { type: 'text', text: 'Sandbox' },
      { type: 'text', text: ' says:' },
      { type: 'text', text: ' hello' },
      { type: 'text', text: ' there' },
      { type: 'finish', finish: 'stop' },
      { type: 'usage', usage: { input: 3, output: 4 } },
      { type: 'done' },
    ]);
  });

  test(`${channel}: [[tool:NAME]] in the user text makes a call to NAME with the other words as its query`, async () => {
    const request = ask('weather in Paris [[tool:get_weather]]', { tools: [weatherTool] });
    assert.deepEqual(await geminiAdapter.complete(upstreams.get(channel), request, signal()), {
      id: hashOf(geminiRequestOf(request)),
      text: '',
      toolCalls: [{ id: 'call_0', name: 'get_weather', arguments: '{"query":"weather in Paris"}' }],
      finish: 'tool_calls',
      usage: { input: 5, output: 4 },
    });
  });
}

test('vertex: a streamed tool call comes whole in one chunk and finishes with tool_calls', async () => {
  const request = ask('[[tool:get_weather]] Oslo', { tools: [weatherTool], stream: true });
  const events = await decodeAll(await geminiAdapter.openStream(upstreams.get('vertex'), request, signal()));
  assert.deepEqual(events, [
    { type: 'tool_call', index: 0, id: 'call_0', name: 'get_weather', arguments: '{"query":"Oslo"}' },
    { type: 'finish', finish: 'tool_calls' },
    { type: 'usage', usage: { input: 3, output: 2 } },
    { type: 'done' },
  ]);
});

test('vertex: the calls carry a bearer token from the account token_uri and go to the project and region path', async () => {
  await geminiAdapter.complete(upstreams.get('vertex'), ask('hi'), signal());
  const [call] = (await loggedRequests(sandbox.url)).filter((request) => request.kind === 'gemini');
  assert.deepEqual(
    [call.path, /^Bearer ya29\.sandbox-[0-9a-f]{32}$/.test(call.headers.authorization), call.headers['x-goog-api-key']],
    ['/v1/projects/sandbox-project/locations/us-central1/publishers/google/models/gemini-2.5-flash:generateContent', true, undefined],
  );
});

test('a Vertex channel whose key is not the account key is refused invalid_grant, and no call reaches the model', async () => {
  const error = await geminiAdapter.complete(upstreams.get('impostor'), ask('hi'), signal()).then(
    () => assert.fail('the call succeeded'),
    (error: { response?: { status?: number; data?: { error?: string } } }) => error,
  );
  const logged = (await loggedRequests(sandbox.url)).map((request) => request.path);
  assert.deepEqual([error.response?.status, error.response?.data?.error, logged], [400, 'invalid_grant', ['/token']]);
});

test('a Gemini API call without a key is 401 in Gemini error shape', async () => {
  const error = await assertHttpError(geminiAdapter.complete(upstreams.get('keyless'), ask('hi'), signal()), 401);
  assert.deepEqual(JSON.parse(error.body), { error: { code: 401, message: 'API key not valid', status: 'UNAUTHENTICATED' } });
});

test('a sandbox fault of status 503 for the gemini kind reaches complete as UpstreamHttpError 503', async () => {
  await addFault(sandbox.url, { kind: 'gemini', status: 503 });
  const error = await assertHttpError(geminiAdapter.complete(upstreams.get('studio'), ask('hi'), signal()), 503);
  assert.equal(JSON.parse(error.body).error.status, 'UNAVAILABLE');
});

test('a sandbox fault of status 429 for model m reaches openStream as UpstreamHttpError 429, other models unharmed', async () => {
  await addFault(sandbox.url, { model: 'm', status: 429 });
  await assertHttpError(geminiAdapter.openStream(upstreams.get('vertex'), ask('hi', { model: 'm', stream: true }), signal()), 429);
  const other = await geminiAdapter.complete(upstreams.get('vertex'), ask('hi'), signal());
  assert.equal(other.text, 'Sandbox says: hi');
});

test('a request geminiRequestOf refuses never reaches the upstream', async () => {
  const request = ask('hi', { messages: [{ role: 'user', content: [{ type: 'image', source: { kind: 'url', url: 'https://example.com/pic' } }] }] });
  await assert.rejects(geminiAdapter.complete(upstreams.get('studio'), request, signal()), { status: 400 });
  assert.deepEqual(await loggedRequests(sandbox.url), []);
});
