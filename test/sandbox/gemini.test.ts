// The sandbox's Gemini API (a key at /v1beta) and Vertex AI (a bearer token at the publisher-model
// path, from its /token endpoint's JWT bearer grant), called with plain fetch.
import assert from 'node:assert/strict';
import { generateKeyPairSync, sign } from 'node:crypto';
import { after, afterEach, before, test } from 'node:test';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.js';
import { SANDBOX_SERVICE_ACCOUNT_EMAIL, sandboxServiceAccount } from '../../src/sandbox/vertex-account.js';
import { addFault, clearSandbox, parseSse, postTo } from './sandbox-client.js';

let sandbox: Sandbox;
before(async () => {
  sandbox = await startSandbox();
});
afterEach(() => clearSandbox(sandbox.url));
after(() => sandbox.close());

const KEY = { 'x-goog-api-key': 'k', 'content-type': 'application/json' };
const studio = (call: string) => `${sandbox.url}/v1beta/models/${call}`;
const vertex = (call: string) => `${sandbox.url}/v1/projects/p/locations/europe-west4/publishers/google/models/${call}`;
const hello = { contents: [{ role: 'user', parts: [{ text: 'hello there' }] }] };

/** A JWT bearer grant for the sandbox account, signed with `privateKey` (the account's own by default). */
function grant(privateKey = sandboxServiceAccount('').private_key, expiresInSeconds = 3600): string {
  const now = Math.floor(Date.now() / 1000);
  const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const claims = {
    iss: SANDBOX_SERVICE_ACCOUNT_EMAIL,
    scope: 'https://www.googleapis.com/auth/cloud-platform',
    aud: `${sandbox.url}/token`,
    iat: now,
    exp: now + expiresInSeconds,
  };
  const unsigned = `${encode({ alg: 'RS256', typ: 'JWT' })}.${encode(claims)}`;
  const assertion = `${unsigned}.${sign('RSA-SHA256', Buffer.from(unsigned), privateKey).toString('base64url')}`;
  return new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion }).toString();
}

async function token(form: string) {
  const res = await fetch(`${sandbox.url}/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form });
  return { status: res.status, body: (await res.json()) as any };
}

test('generateContent with a key answers the sandbox text, usage and the model version', async () => {
  const { status, body } = await postTo(studio('gemini-2.5-flash:generateContent'), hello, KEY);
  assert.deepEqual(
    [status, { ...body, responseId: typeof body.responseId }],
    [
      200,
      {
        candidates: [{ content: { role: 'model', parts: [{ text: 'Sandbox says: hello there' }] }, index: 0, finishReason: 'STOP' }],
        usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 4, totalTokenCount: 7 },
        modelVersion: 'gemini-2.5-flash',
        responseId: 'string',
      },
    ],
  );
});

test('a key in ?key= is taken as the header is', async () => {
  const { status } = await postTo(`${studio('g:generateContent')}?key=k`, hello, { 'content-type': 'application/json' });
  assert.equal(status, 200);
});

test('a call without a key is 401 in Gemini error shape', async () => {
  const { status, body } = await postTo(studio('g:generateContent'), hello, { 'content-type': 'application/json' });
  assert.deepEqual([status, body], [401, { error: { code: 401, message: 'API key not valid', status: 'UNAUTHENTICATED' } }]);
});

test('a Vertex call with a key but no token is 401 in Gemini error shape', async () => {
  const { status, body } = await postTo(vertex('g:generateContent'), hello, KEY);
  assert.deepEqual([status, body.error.code, body.error.status], [401, 401, 'UNAUTHENTICATED']);
});

test('a Vertex call with a token the sandbox never issued is 401', async () => {
  const { status } = await postTo(vertex('g:generateContent'), hello, { authorization: 'Bearer ya29.made-up', 'content-type': 'application/json' });
  assert.equal(status, 401);
});

test('a grant signed with the account key gets an hour-long bearer token that opens the Vertex path', async () => {
  const issued = await token(grant());
  assert.deepEqual([issued.status, issued.body.token_type, issued.body.expires_in], [200, 'Bearer', 3600]);
  const { status, body } = await postTo(vertex('gemini-2.5-pro:generateContent'), hello, {
    authorization: `Bearer ${issued.body.access_token}`,
    'content-type': 'application/json',
  });
  assert.deepEqual([status, body.candidates[0].content.parts, body.modelVersion], [200, [{ text: 'Sandbox says: hello there' }], 'gemini-2.5-pro']);
});

test('a grant signed with another RSA key is refused 400 invalid_grant', async () => {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  assert.deepEqual(await token(grant(privateKey.export({ type: 'pkcs8', format: 'pem' }) as string)), {
    status: 400,
    body: { error: 'invalid_grant', error_description: 'Invalid JWT Signature.' },
  });
});

test('an expired grant is refused 400 invalid_grant', async () => {
  const { status, body } = await token(grant(undefined, -60));
  assert.deepEqual([status, body.error], [400, 'invalid_grant']);
});

test('a grant of another type is refused 400 unsupported_grant_type', async () => {
  const { status, body } = await token(new URLSearchParams({ grant_type: 'client_credentials' }).toString());
  assert.deepEqual([status, body.error], [400, 'unsupported_grant_type']);
});

test('countTokens answers {totalTokens}: a turn and its words, and the system instruction', async () => {
  const body = { ...hello, systemInstruction: { parts: [{ text: 'Be brief.' }] } };
  assert.deepEqual(await postTo(studio('g:countTokens'), body, KEY).then((r) => [r.status, r.body]), [200, { totalTokens: 6 }]);
});

test('streamGenerateContent with alt=sse is one data line per chunk, the last with finishReason and usage', async () => {
  const res = await fetch(`${studio('g:streamGenerateContent')}?alt=sse`, { method: 'POST', headers: KEY, body: JSON.stringify(hello) });
  const chunks = parseSse(await res.text());
  assert.deepEqual(
    [
      res.headers.get('content-type'),
      chunks.map((chunk) => chunk.candidates[0].content.parts[0].text).join(''),
      chunks.map((chunk) => [chunk.candidates[0].finishReason, chunk.usageMetadata]).slice(-2),
    ],
    [
      'text/event-stream',
      'Sandbox says: hello there',
      [
        [undefined, undefined],
        ['STOP', { promptTokenCount: 3, candidatesTokenCount: 4, totalTokenCount: 7 }],
      ],
    ],
  );
});

test('without alt=sse the stream is one valid JSON array of the same chunks', async () => {
  const request = (query: string) => fetch(`${studio('g:streamGenerateContent')}${query}`, { method: 'POST', headers: KEY, body: JSON.stringify(hello) });
  const array = JSON.parse(await (await request('')).text());
  const sse = parseSse(await (await request('?alt=sse')).text());
  assert.deepEqual(array, sse);
});

test('an unknown method on a model is 404', async () => {
  const { status, body } = await postTo(studio('g:predict'), hello, KEY);
  assert.deepEqual([status, body.error.status], [404, 'NOT_FOUND']);
});

test('a request without contents is 400 INVALID_ARGUMENT naming contents', async () => {
  const { status, body } = await postTo(studio('g:generateContent'), { contents: [] }, KEY);
  assert.deepEqual([status, body.error.status, body.error.message.startsWith('contents:')], [400, 'INVALID_ARGUMENT', true]);
});

test('a fault rule selects by the model in the path and answers in Gemini error shape', async () => {
  await addFault(sandbox.url, { model: 'm', status: 429 });
  const faulted = await postTo(studio('m:generateContent'), hello, KEY);
  const other = await postTo(studio('n:generateContent'), hello, KEY);
  assert.deepEqual([faulted.status, faulted.body.error.status, other.status], [429, 'RESOURCE_EXHAUSTED', 200]);
});
