// Files (uploads, and the URL that serves them) and the account's generated assets.
import { errorResponses, LOOKUP_ERRORS, UPLOAD_ERRORS } from './errors.js';
import { headers, IdempotencyKeyHeader } from './headers.js';
import { LimitParam } from './query.js';

const instant = { type: 'string', format: 'date-time' } as const;
const tags = ['files'];

/** The upload is read by the handler, part by part, under the size and quota limits: documented only. */
const UploadForm = {
  type: 'object',
  required: ['file'],
  properties: {
    file: { type: 'string', format: 'binary', description: 'The file; its name and type are kept.' },
    purpose: {
      type: 'string',
      enum: ['batch', 'user_data', 'assistants', 'vision', 'fine-tune', 'evals'],
      description: '`batch` for a batch’s input (JSONL); optional.',
    },
  },
} as const;

export const FileUploadSchema = {
  tags,
  summary: 'Uploads a file, answered with a URL the gateway serves (usable as file_url).',
  description: 'Counts against the account’s file storage until it expires or is deleted. Storing is free, but the account must hold a minimum balance.',
  docsOnly: { body: { content: { 'multipart/form-data': { schema: UploadForm } } }, headers: headers(IdempotencyKeyHeader) },
  response: {
    201: {
      description: 'The stored file.',
      type: 'object',
      required: ['id', 'object', 'url', 'bytes', 'filename', 'created_at', 'expires_at'],
      properties: {
        id: { type: 'string' },
        object: { type: 'string', enum: ['file'] },
        url: { type: 'string', description: 'Unguessable; served without a key until the file expires.' },
        bytes: { type: 'integer' },
        filename: { type: 'string' },
        created_at: instant,
        expires_at: instant,
        purpose: {
          type: 'string',
          description: 'The purpose the upload named (OpenAI’s Files API); absent when it named none. `batch`: a batch’s input file.',
        },
        status: { type: 'string', enum: ['processed'], description: 'With purpose: the file is ready.' },
      },
    },
    ...errorResponses(400, 401, 402, 409, 413, 422, 429, 500, 503),
    ...UPLOAD_ERRORS,
  },
};

export const FileDeleteSchema = {
  tags,
  summary: 'Deletes one of the account’s files at once.',
  params: { type: 'object', required: ['id'], properties: { id: { type: 'string', description: 'The file id.' } } },
  response: {
    200: {
      description: 'Deleted.',
      type: 'object',
      properties: { id: { type: 'string' }, object: { type: 'string', enum: ['file'] }, deleted: { type: 'boolean', enum: [true] } },
    },
    ...LOOKUP_ERRORS,
  },
};

export const FileServeSchema = {
  tags,
  summary: 'A stored file, as a download; its unguessable URL is the only credential.',
  params: {
    type: 'object',
    required: ['id', 'name'],
    properties: { id: { type: 'string', description: 'The file id.' }, name: { type: 'string', description: 'The file name.' } },
  },
  response: {
    200: {
      description:
        'The bytes, as an attachment: the uploaded type if it is audio, video, PNG, JPEG, GIF, WebP, PDF or plain text, else application/octet-stream.',
      content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
    },
    ...errorResponses(404),
  },
};

export const AssetsSchema = {
  tags,
  summary: 'The account’s generated images (the gallery) and videos, newest first.',
  querystring: {
    type: 'object',
    properties: {
      kind: { type: 'string', enum: ['image', 'video'], description: 'Only images, or only videos.' },
      limit: { ...LimitParam, description: 'At most this many, 1 to 1000 (default 100).' },
    },
  },
  response: {
    200: {
      description: 'The assets.',
      type: 'object',
      properties: {
        object: { type: 'string', enum: ['list'] },
        data: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              id: { type: 'string' },
              kind: { type: 'string', enum: ['image', 'video'] },
              url: { type: 'string' },
              task_id: { type: ['string', 'null'], description: 'The task that made it.' },
              source_task_id: { type: ['string', 'null'], description: 'An erased video: the task of the original.' },
              created_at: instant,
            },
          },
        },
      },
    },
    ...errorResponses(400, 401, 429, 503),
  },
};
