// POST /v1/images/generations (JSON, validated here) and POST /v1/images/edits (a multipart form,
// read and checked by its handler: documented only). Fields not named here go to the upstream as sent.
import { METERED_ERRORS, UPLOAD_ERRORS } from './errors.js';
import { headers, IdempotencyKeyHeader } from './headers.js';

export const MAX_IMAGES_PER_CALL = 10;
/** The sizes OpenAI's image models take; a size a model is priced at (`image_prices`) is taken too. */
export const IMAGE_SIZES = ['auto', '256x256', '512x512', '1024x1024', '1536x1024', '1024x1536', '1792x1024', '1024x1792'] as const;
export const IMAGE_QUALITIES = ['standard', 'hd', 'low', 'medium', 'high', 'auto'] as const;
export const IMAGE_RESPONSE_FORMATS = ['url', 'b64_json'] as const;
export const IMAGE_OUTPUT_FORMATS = ['png', 'jpeg', 'webp'] as const;
export const IMAGE_BACKGROUNDS = ['transparent', 'opaque', 'auto'] as const;

// The tag of the images API (tasks: its async form); an `images` tag of its own would need one in openapi.ts.
const tags = ['images'];

/** The fields generations and edits share; each is sent to the upstream as the caller wrote it. */
const commonFields = {
  model: { type: 'string', minLength: 1, description: 'An image model of GET /v1/models?type=image.' },
  prompt: { type: 'string', minLength: 1, maxLength: 32_000 },
  n: { type: 'integer', minimum: 1, maximum: MAX_IMAGES_PER_CALL, description: 'Images to make, 1 by default; each is held for, and each returned is billed.' },
  size: {
    type: 'string',
    minLength: 1,
    description: `One of ${IMAGE_SIZES.join(', ')}, or a size the model is priced at. With quality, picks the price per image (1024x1024 when absent).`,
  },
  quality: { type: 'string', enum: [...IMAGE_QUALITIES], description: 'standard and hd (dall-e-3); low, medium, high and auto (GPT image models).' },
  response_format: {
    type: 'string',
    enum: [...IMAGE_RESPONSE_FORMATS],
    description: 'url (default): a URL the gateway serves; b64_json: the image inline. Either way the image joins the gallery.',
  },
  background: { type: 'string', enum: [...IMAGE_BACKGROUNDS] },
  output_format: { type: 'string', enum: [...IMAGE_OUTPUT_FORMATS] },
  output_compression: { type: 'integer', minimum: 0, maximum: 100 },
  user: { type: 'string' },
} as const;

export const ImagesGenerationsBody = {
  type: 'object',
  description: 'OpenAI’s images generation request.',
  required: ['model', 'prompt'],
  properties: {
    ...commonFields,
    style: { type: 'string', enum: ['vivid', 'natural'], description: 'dall-e-3.' },
    stream: { type: 'boolean', enum: [false], description: 'Streamed (partial) images are not offered: false or absent.' },
  },
} as const;

const EditForm = {
  type: 'object',
  required: ['model', 'prompt', 'image'],
  properties: {
    ...commonFields,
    image: {
      type: 'string',
      format: 'binary',
      description: 'The image to edit; several as repeated `image[]` parts (up to 16). PNG, JPEG or WebP, checked by their bytes.',
    },
    mask: { type: 'string', format: 'binary', description: 'A PNG whose transparent areas say where to edit (the first image).' },
    input_fidelity: { type: 'string', enum: ['low', 'high'] },
  },
} as const;

const ImagesAnswer = {
  description: 'The images, answered at once: each a URL the gateway serves or its bytes inline (response_format), with usage for per-token models.',
  type: 'object',
  required: ['created', 'data'],
  properties: {
    created: { type: 'integer', description: 'Unix seconds.' },
    data: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          url: { type: 'string', description: 'The gateway’s own URL of the image, served without a key until it expires (files.ttl_ms).' },
          b64_json: { type: 'string' },
          revised_prompt: { type: 'string' },
        },
      },
    },
    usage: { type: 'object', additionalProperties: true, description: 'GPT image models: the tokens the call was billed on.' },
  },
  additionalProperties: true,
} as const;

const BILLING =
  'Holds n images at the price of the request’s size and quality (the model’s image_prices, else price.image; per-token models: the prompt and each image’s output at the model’s maximum), settles on the images returned (or the tokens reported), and releases on failure.';

export const ImagesGenerationsSchema = {
  tags,
  summary: 'Generates images, answered at once (OpenAI’s images API).',
  description: BILLING,
  body: ImagesGenerationsBody,
  docsOnly: { headers: headers(IdempotencyKeyHeader) },
  response: { 200: ImagesAnswer, ...METERED_ERRORS },
};

export const ImagesEditsSchema = {
  tags,
  summary: 'Edits or extends images from a prompt, answered at once (OpenAI’s images API).',
  description: `${BILLING} The uploads are read into memory under the upload limit and not kept.`,
  docsOnly: {
    body: { content: { 'multipart/form-data': { schema: EditForm } } },
    headers: headers(IdempotencyKeyHeader),
  },
  response: { 200: ImagesAnswer, ...METERED_ERRORS, ...UPLOAD_ERRORS },
};
