// OpenAI's images edits: the caller's images (and mask) sent on as a multipart form, answered at
// once in the images answer's shape (client.ts reads it).
import type { Readable } from 'node:stream';
import { headerValue, UpstreamHttpError } from '../http.js';
import type { Upstream } from '../pool.js';
import { type ImagesResult, readImagesAnswer } from './client.js';

export interface ImageUpload {
  bytes: Buffer;
  filename: string;
  contentType: string;
}

export interface ImageEditRequest {
  /** The form's text fields as the upstream takes them (model, prompt, n, size…). */
  fields: Record<string, string>;
  images: ImageUpload[];
  mask?: ImageUpload;
}

const ERROR_BODY_LIMIT = 64 * 1024;

const blobOf = (upload: ImageUpload) => new Blob([new Uint8Array(upload.bytes)], { type: upload.contentType });

/** The form as bytes and its content type (with the boundary), encoded by the platform's own FormData. */
export async function encodeEditForm(request: ImageEditRequest): Promise<{ body: Buffer; contentType: string }> {
  const form = new FormData();
  for (const [name, value] of Object.entries(request.fields)) form.append(name, value);
  // One image as `image`; several as `image[]`, the way OpenAI's SDKs send them.
  const imageField = request.images.length === 1 ? 'image' : 'image[]';
  for (const image of request.images) form.append(imageField, blobOf(image), image.filename);
  if (request.mask) form.append('mask', blobOf(request.mask), request.mask.filename);
  const encoded = new Request('http://form.invalid/', { method: 'POST', body: form });
  return { body: Buffer.from(await encoded.arrayBuffer()), contentType: encoded.headers.get('content-type') ?? 'multipart/form-data' };
}

export async function editImages(upstream: Upstream, request: ImageEditRequest, signal: AbortSignal): Promise<ImagesResult> {
  const { body, contentType } = await encodeEditForm(request);
  const response = await upstream.pool.request({
    method: 'POST',
    path: `${upstream.basePath}/v1/images/edits`,
    headers: { 'content-type': contentType, ...(upstream.channel.api_key && { authorization: `Bearer ${upstream.channel.api_key}` }) },
    body,
    signal,
  });
  if (response.statusCode < 200 || response.statusCode >= 300) {
    throw new UpstreamHttpError(
      response.statusCode,
      await readAtMost(response.body, ERROR_BODY_LIMIT),
      headerValue(response.headers['content-type']),
      headerValue(response.headers['retry-after']),
    );
  }
  return readImagesAnswer(await response.body.text());
}

/** An error body's first `limit` bytes; the rest is dropped. */
async function readAtMost(body: Readable, limit: number): Promise<string> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const buffer = chunk as Buffer;
    parts.push(buffer.subarray(0, limit - size));
    size += buffer.length;
    if (size >= limit) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(parts).toString('utf8');
}
