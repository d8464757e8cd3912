// POST /v1/images/edits' multipart form, read part by part: the images (`image`, or several as
// `image[]`) and the optional mask into memory under the upload limit, each checked to be an image
// by its bytes; the text fields checked as the generations schema checks its JSON fields.
import { createHash } from 'node:crypto';
import type { MultipartFile } from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { invalidRequest, MESSAGES } from '../errors.js';
import { imageContentType, imageTypeOf } from '../files/generated-images.js';
import type { ImageUpload } from '../upstreams/openai-images/edits.js';
import { IMAGE_BACKGROUNDS, IMAGE_OUTPUT_FORMATS, IMAGE_QUALITIES, IMAGE_RESPONSE_FORMATS, MAX_IMAGES_PER_CALL } from './schemas/images-sync.js';
import { fileSentAsText, tooLarge } from './uploads.js';

/** The most images one edit sends (OpenAI's limit for GPT image models); the mask comes on top. */
export const MAX_EDIT_IMAGES = 16;
const IMAGE_FIELDS = new Set(['image', 'image[]']);
const FIELD_LIMIT_BYTES = 1024 * 1024; // busboy's default fieldSize, which the multipart limits keep

export interface ImageEditForm {
  /** The text fields as sent; `n` and `output_compression` also checked as integers. */
  fields: Record<string, string>;
  images: ImageUpload[];
  mask?: ImageUpload;
  /** The uploads' SHA-256, in order (the mask's last): what identifies them for Idempotency-Key. */
  digests: string[];
}

const oneOf = (values: readonly string[]) => `must be one of ${values.map((v) => JSON.stringify(v)).join(', ')}`;
const ENUMS: Record<string, readonly string[]> = {
  quality: IMAGE_QUALITIES,
  response_format: IMAGE_RESPONSE_FORMATS,
  background: IMAGE_BACKGROUNDS,
  output_format: IMAGE_OUTPUT_FORMATS,
  input_fidelity: ['low', 'high'],
  stream: ['false'],
};
const INTEGERS: Record<string, [number, number]> = { n: [1, MAX_IMAGES_PER_CALL], output_compression: [0, 100] };

/** The form's text fields checked; the message names the field, as a JSON body's schema would. */
export function checkEditFields(fields: Record<string, string>): void {
  if (!fields.model) throw invalidRequest(MESSAGES.modelRequired);
  if (!fields.prompt) throw invalidRequest('prompt field is required');
  for (const [name, values] of Object.entries(ENUMS)) {
    const value = fields[name];
    if (value !== undefined && !values.includes(value)) throw invalidRequest(`${name}: ${oneOf(values)}`);
  }
  for (const [name, [min, max]] of Object.entries(INTEGERS)) {
    const value = fields[name];
    if (value === undefined) continue;
    if (!/^-?\d+$/.test(value)) throw invalidRequest(`${name}: must be integer`);
    const number = Number(value);
    if (number < min) throw invalidRequest(`${name}: must be >= ${min}`);
    if (number > max) throw invalidRequest(`${name}: must be <= ${max}`);
  }
}

/** A file part's bytes, refused past the upload limit (multipart's own fileSize limit throws first). */
async function readUpload(part: MultipartFile, field: string, limitBytes: number): Promise<ImageUpload> {
  let bytes: Buffer;
  try {
    bytes = await part.toBuffer();
  } catch (error) {
    if ((error as { code?: unknown }).code === 'FST_REQ_FILE_TOO_LARGE') throw tooLarge(`${field}: larger than the upload limit of ${limitBytes} bytes`);
    throw error;
  }
  const type = imageTypeOf(bytes);
  if (!type) throw invalidRequest(`${field}: not an image; send a PNG, JPEG or WebP file`);
  if (field === 'mask' && type !== 'png') throw invalidRequest('mask: must be a PNG file');
  return { bytes, filename: part.filename || `${field}.${type}`, contentType: imageContentType(type) };
}

export async function readImageEditForm(request: FastifyRequest, { limitBytes }: { limitBytes: number }): Promise<ImageEditForm> {
  const fields: Record<string, string> = {};
  const images: ImageUpload[] = [];
  let mask: ImageUpload | undefined;
  let totalBytes = 0;
  for await (const part of request.parts()) {
    const field = part.fieldname;
    if (part.type === 'file') {
      let upload: ImageUpload;
      if (IMAGE_FIELDS.has(field)) {
        if (images.length === MAX_EDIT_IMAGES) throw invalidRequest(`image: at most ${MAX_EDIT_IMAGES} images`);
        upload = await readUpload(part, 'image', limitBytes);
        images.push(upload);
      } else if (field === 'mask') {
        if (mask) throw invalidRequest('mask: one mask at most');
        upload = await readUpload(part, 'mask', limitBytes);
        mask = upload;
      } else throw invalidRequest(`${field}: unexpected file field; send the images as image (or image[]) and the mask as mask`);
      totalBytes += upload.bytes.length;
      // All of them are in memory at once: together they stay under the one limit too.
      if (totalBytes > limitBytes) throw tooLarge(`image: the uploads together are larger than the upload limit of ${limitBytes} bytes`);
    } else if (IMAGE_FIELDS.has(field) || field === 'mask') {
      throw fileSentAsText(field === 'mask' ? 'mask' : 'image');
    } else {
      // multipart cuts a field past its size limit and says so only here
      if (part.valueTruncated) throw tooLarge(`${field}: longer than the form field limit of ${FIELD_LIMIT_BYTES} bytes`);
      fields[field] = String(part.value);
    }
  }
  checkEditFields(fields);
  if (images.length === 0) throw invalidRequest('image field is required');
  const digests = [...images, ...(mask ? [mask] : [])].map((upload) => createHash('sha256').update(upload.bytes).digest('hex'));
  return { fields, images, mask, digests };
}
