// Where a Gemini call goes and how it authenticates (endpoint.ts): the Gemini API with a key, or
// Vertex AI with a service account's OAuth token, asked of the account's own token_uri.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { ChannelConfig } from '../../../src/config/schema.js';
import { type Sandbox, startSandbox } from '../../../src/sandbox/server.js';
import { sandboxServiceAccount } from '../../../src/sandbox/vertex-account.js';
import { geminiAuthHeaders, geminiPath } from '../../../src/upstreams/gemini/endpoint.js';
import type { Upstream } from '../../../src/upstreams/pool.js';
import { loggedRequests } from '../../sandbox/sandbox-client.js';

/** Only the channel is read: no pool is needed to build a path or headers. */
const upstreamOf = (fields: Partial<ChannelConfig>) => ({ channel: { kind: 'gemini', base_url: 'http://gemini.test', ...fields } }) as Upstream;
const vertexOf = (service_account_json: string) => ({ vertex: { project: 'my project', region: 'europe-west4', service_account_json } });

test('a Gemini API call goes to /v1beta/models/{model}:{verb}, the model encoded', () => {
  assert.deepEqual(
    [geminiPath(upstreamOf({ api_key: 'k' }), 'gemini-2.5-flash', 'generateContent'), geminiPath(upstreamOf({ api_key: 'k' }), 'tuned/m#1', 'countTokens')],
    ['/v1beta/models/gemini-2.5-flash:generateContent', '/v1beta/models/tuned%2Fm%231:countTokens'],
  );
});

test('a stream asks for SSE', () => {
  assert.equal(geminiPath(upstreamOf({ api_key: 'k' }), 'g', 'streamGenerateContent'), '/v1beta/models/g:streamGenerateContent?alt=sse');
});

test('a Vertex call goes to the publisher-model path of the channel project and region, encoded', () => {
  assert.equal(
    geminiPath(upstreamOf(vertexOf('{}')), 'gemini-2.5-pro', 'streamGenerateContent'),
    '/v1/projects/my%20project/locations/europe-west4/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse',
  );
});

test('a key channel authenticates with x-goog-api-key, and a channel without one sends nothing', async () => {
  assert.deepEqual([await geminiAuthHeaders(upstreamOf({ api_key: 'AIza-k' })), await geminiAuthHeaders(upstreamOf({}))], [{ 'x-goog-api-key': 'AIza-k' }, {}]);
});

let sandbox: Sandbox;
before(async () => {
  sandbox = await startSandbox();
});
after(() => sandbox.close());

test('a Vertex channel gets one token from the account token_uri and sends it again on the next call', async () => {
  const upstream = upstreamOf(vertexOf(JSON.stringify(sandboxServiceAccount(`${sandbox.url}/token`))));
  const first = await geminiAuthHeaders(upstream);
  const second = await geminiAuthHeaders(upstream);
  const paths = (await loggedRequests(sandbox.url)).map((request) => request.path);
  assert.deepEqual([/^Bearer ya29\.sandbox-/.test(first.authorization ?? ''), second, paths], [true, first, ['/token']]);
});
