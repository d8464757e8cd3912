// The sandbox's OpenAI images edits: a multipart form of one image or several and a mask, answered
// at once in the images answer's shape; refusals in OpenAI's error shape; faults by kind image-edits.
import assert from 'node:assert/strict';
import { after, before, beforeEach, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import { PNG_BYTES } from '../../src/sandbox/media.js';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.js';
import { addFault, clearSandbox, loggedRequests } from './sandbox-client.js';

let sandbox: Sandbox;
before(async () => {
  sandbox = await startSandbox({ port: 0 });
});
after(() => sandbox.close());
beforeEach(() => clearSandbox(sandbox.url));

const JPEG_BYTES = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46]);
const client = () => new OpenAI({ apiKey: 'sk-test', baseURL: `${sandbox.url}/v1`, maxRetries: 0 });
const png = (name: string) => toFile(PNG_BYTES, name, { type: 'image/png' });

/** A form posted as it stands: `image` parts are files of the given bytes; everything else is text. */
async function postForm(fields: Record<string, string>, files: [string, Buffer][], headers: Record<string, string> = { authorization: 'Bearer sk-test' }) {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  for (const [name, bytes] of files) form.append(name, new Blob([new Uint8Array(bytes)]), `${name}.bin`);
  const res = await fetch(`${sandbox.url}/v1/images/edits`, { method: 'POST', headers, body: form });
  return { status: res.status, body: (await res.json()) as any };
}

test('an edit of one image through the official client answers n URLs that serve a PNG', async () => {
  const answer = await client().images.edit({ model: 'sandbox-image', image: await png('gate.png'), mask: await png('mask.png'), prompt: 'a rainbow', n: 2 });
  assert.equal(answer.data?.length, 2);
  assert.equal(answer.usage, undefined);
  const image = await fetch(answer.data![1]!.url!);
  assert.deepEqual([image.status, image.headers.get('content-type')], [200, 'image/png']);
  assert.deepEqual(Buffer.from(await image.arrayBuffer()), PNG_BYTES);
});

test('several images (image[]) to a per-token model count in its input tokens, answered inline', async () => {
  const images = [await png('a.png'), await toFile(JPEG_BYTES, 'b.jpg', { type: 'image/jpeg' })];
  const answer = await client().images.edit({ model: 'sandbox-image-token', image: images, prompt: 'merge these two', response_format: 'b64_json' });
  assert.deepEqual(
    answer.data?.map((image) => image.b64_json),
    [PNG_BYTES.toString('base64')],
  );
  assert.deepEqual(answer.usage, {
    input_tokens: 3 + 2 * 65,
    input_tokens_details: { text_tokens: 3, image_tokens: 2 * 65 },
    output_tokens: 1056,
    total_tokens: 3 + 2 * 65 + 1056,
  });
});

test('the same edit of the same image gives the same URLs; another image gives others', async () => {
  const edit = (bytes: Buffer) => postForm({ model: 'sandbox-image', prompt: 'same' }, [['image', bytes]]);
  const first = await edit(PNG_BYTES);
  assert.deepEqual((await edit(PNG_BYTES)).body, first.body);
  assert.notDeepEqual((await edit(JPEG_BYTES)).body.data, first.body.data);
});

test('an image that is not PNG, JPEG or WebP, a mask that is not a PNG, no image, and no key are refused in OpenAI’s shape', async () => {
  const prompt = { model: 'sandbox-image', prompt: 'x' };
  const text = await postForm(prompt, [['image', Buffer.from('plain text')]]);
  const jpegMask = await postForm(prompt, [
    ['image', PNG_BYTES],
    ['mask', JPEG_BYTES],
  ]);
  const none = await postForm(prompt, []);
  const noKey = await postForm(prompt, [['image', PNG_BYTES]], {});
  assert.deepEqual(
    [text.status, text.body.error.message, jpegMask.status, jpegMask.body.error.message, none.status, none.body.error.message, noKey.status],
    [
      400,
      "Invalid file 'image': unsupported mimetype. Supported file formats are 'image/jpeg', 'image/png', and 'image/webp'.",
      400,
      'mask: expected a PNG file',
      400,
      "image: required, one file (or several as 'image[]')",
      401,
    ],
  );
});

test('a JSON body is refused: edits take a multipart form', async () => {
  const res = await fetch(`${sandbox.url}/v1/images/edits`, {
    method: 'POST',
    headers: { authorization: 'Bearer sk-test', 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'sandbox-image', prompt: 'x' }),
  });
  assert.deepEqual([res.status, ((await res.json()) as any).error.message], [400, 'body: expected multipart/form-data']);
});

test('fault rules select edits by kind image-edits, generations left alone', async () => {
  await addFault(sandbox.url, { kind: 'image-edits', status: 503, times: 1 });
  const generated = await client().images.generate({ model: 'sandbox-image', prompt: 'untouched' });
  assert.equal(generated.data?.length, 1);
  await assert.rejects(client().images.edit({ model: 'sandbox-image', image: await png('a.png'), prompt: 'faulted' }), (error: any) => error.status === 503);
  assert.deepEqual(
    (await loggedRequests(sandbox.url)).map((r) => r.kind),
    ['images', 'image-edits'],
  );
});

test('a task_outcome failed fault refuses the edit as a content policy violation', async () => {
  await addFault(sandbox.url, { kind: 'image-edits', task_outcome: 'failed', times: 1 });
  const refused = await postForm({ model: 'sandbox-image', prompt: 'x' }, [['image', PNG_BYTES]]);
  assert.deepEqual([refused.status, refused.body.error.code], [400, 'content_policy_violation']);
});
