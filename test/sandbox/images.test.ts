import assert from 'node:assert/strict';
import { after, before, beforeEach, test } from 'node:test';
import OpenAI from 'openai';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.js';
import { AUTH, addFault, clearSandbox, loggedRequests, postTo } from './sandbox-client.js';

let sandbox: Sandbox;
before(async () => {
  sandbox = await startSandbox({ port: 0 });
});
after(() => sandbox.close());
beforeEach(() => clearSandbox(sandbox.url));

const url = () => `${sandbox.url}/v1/images/generations`;
const post = (body: unknown, headers: Record<string, string> = AUTH) => postTo(url(), body, headers);
const CAT = { model: 'sandbox-image', prompt: 'a cat in a hat', n: 2 };

test('a per-image model answers n URLs and no usage, at once', async () => {
  const { status, body } = await post(CAT);
  assert.equal(status, 200);
  const hash = /image-([0-9a-f]{24})-1\.png$/.exec(body.data[0].url)?.[1];
  assert.deepEqual(body, {
    created: 1_735_689_600,
    data: [{ url: `${sandbox.url}/__media/image-${hash}-1.png` }, { url: `${sandbox.url}/__media/image-${hash}-2.png` }],
  });
});

test('the same request gives the same URLs, and each URL serves a PNG', async () => {
  const first = await post(CAT);
  const second = await post(CAT);
  assert.deepEqual(first.body, second.body);
  const image = await fetch(first.body.data[1].url);
  assert.deepEqual([image.status, image.headers.get('content-type')], [200, 'image/png']);
  assert.equal(
    Buffer.from(await image.arrayBuffer())
      .subarray(1, 4)
      .toString('latin1'),
    'PNG',
  );
});

test('n defaults to 1, and a per-token model reports usage: prompt words in, 1056 tokens per image out', async () => {
  const one = await post({ model: 'sandbox-image', prompt: 'x' });
  const tokens = await post({ ...CAT, model: 'sandbox-image-token' });
  assert.equal(one.body.data.length, 1);
  assert.deepEqual(tokens.body.usage, {
    input_tokens: 5,
    input_tokens_details: { text_tokens: 5, image_tokens: 0 },
    output_tokens: 2112,
    total_tokens: 2117,
  });
});

test('response_format b64_json answers the PNG inline', async () => {
  const { body } = await post({ ...CAT, n: 1, response_format: 'b64_json' });
  assert.deepEqual(Object.keys(body.data[0]), ['b64_json']);
  assert.equal(Buffer.from(body.data[0].b64_json, 'base64').subarray(1, 4).toString('latin1'), 'PNG');
});

test('a task_outcome failed fault refuses as a content policy violation, times times', async () => {
  await addFault(sandbox.url, { kind: 'images', task_outcome: 'failed', times: 1 });
  const refused = await post(CAT);
  const next = await post(CAT);
  assert.deepEqual(
    [refused.status, refused.body],
    [
      400,
      {
        error: {
          message: 'Your request was rejected as a result of our safety system (sandbox fault: task_outcome failed).',
          type: 'invalid_request_error',
          param: null,
          code: 'content_policy_violation',
        },
      },
    ],
  );
  assert.equal(next.status, 200);
});

test('a missing prompt, a bad n and a missing key are refused in the OpenAI error shape', async () => {
  const noPrompt = await post({ model: 'sandbox-image' });
  const badN = await post({ ...CAT, n: 11 });
  const noKey = await post(CAT, { 'content-type': 'application/json' });
  assert.deepEqual(
    [noPrompt.status, noPrompt.body.error.message, badN.status, badN.body.error.message, noKey.status, noKey.body.error.code],
    [400, 'prompt: required, a non-empty string', 400, 'n: expected an integer from 1 to 10', 401, 'invalid_api_key'],
  );
});

test('the official openai client reads the answer', async () => {
  const client = new OpenAI({ apiKey: 'sk-test', baseURL: `${sandbox.url}/v1`, maxRetries: 0 });
  const images = await client.images.generate({ model: 'sandbox-image', prompt: 'a cat', n: 3 });
  assert.equal(images.data?.length, 3);
  assert.match(images.data?.[2]?.url ?? '', /-3\.png$/);
});

test('generation requests and media fetches are logged with their kinds', async () => {
  const { body } = await post({ ...CAT, n: 1 });
  await (await fetch(body.data[0].url)).arrayBuffer();
  const logged = (await loggedRequests(sandbox.url)).map((r) => [r.kind, r.method]);
  assert.deepEqual(logged, [
    ['images', 'POST'],
    ['media', 'GET'],
  ]);
});
