// The Batch API (OpenAI's shape) and the reads of an account's files that go with it.
import { BATCH_ENDPOINTS } from '../../batches/input-file.js';
import { errorResponses, LOOKUP_ERRORS } from './errors.js';

const tags = ['batches'];
const seconds = { type: ['integer', 'null'], description: 'Unix seconds; null until it happens.' } as const;
const BATCH_STATUSES = ['validating', 'failed', 'in_progress', 'finalizing', 'completed', 'expired', 'cancelling', 'cancelled'];

const Metadata = {
  type: ['object', 'null'],
  maxProperties: 16,
  propertyNames: { maxLength: 64 },
  additionalProperties: { type: 'string', maxLength: 512 },
  description: 'Up to 16 pairs of your own: keys of at most 64 characters, string values of at most 512.',
} as const;

export const Batch = {
  type: 'object',
  required: ['id', 'object', 'endpoint', 'input_file_id', 'completion_window', 'status', 'created_at', 'request_counts'],
  properties: {
    id: { type: 'string', pattern: '^batch_' },
    object: { type: 'string', enum: ['batch'] },
    endpoint: { type: 'string', enum: [...BATCH_ENDPOINTS] },
    errors: { type: 'null' },
    input_file_id: { type: 'string' },
    completion_window: { type: 'string', enum: ['24h'] },
    status: { type: 'string', enum: BATCH_STATUSES },
    output_file_id: { type: ['string', 'null'], description: 'The answered (2xx) lines, once the batch ended; null when there are none.' },
    error_file_id: { type: ['string', 'null'], description: 'The other lines that ended, once the batch ended; null when there are none.' },
    created_at: { type: 'integer' },
    in_progress_at: seconds,
    expires_at: seconds,
    finalizing_at: seconds,
    completed_at: seconds,
    failed_at: seconds,
    expired_at: seconds,
    cancelling_at: seconds,
    cancelled_at: seconds,
    request_counts: {
      type: 'object',
      properties: { total: { type: 'integer' }, completed: { type: 'integer' }, failed: { type: 'integer' } },
    },
    metadata: { type: ['object', 'null'], additionalProperties: { type: 'string' } },
    usage: { type: 'object', description: 'Tokens of the answered lines.' },
    livemode: { type: 'boolean' },
  },
} as const;

const BatchId = { type: 'object', required: ['id'], properties: { id: { type: 'string', description: 'The batch id (batch_…).' } } };

export const BatchCreateSchema = {
  tags,
  summary: 'Creates a batch: the requests of an uploaded JSONL file (purpose batch), run in the background at the batch price.',
  description:
    'Each line of the file is `{custom_id, method: "POST", url, body}`, its url the batch’s endpoint. The file is checked whole before the batch is made; a fault is a 400 naming the line and field.',
  body: {
    type: 'object',
    required: ['input_file_id', 'endpoint', 'completion_window'],
    properties: {
      input_file_id: { type: 'string', minLength: 1, description: 'A file of the account uploaded with purpose batch.' },
      endpoint: { type: 'string', enum: [...BATCH_ENDPOINTS] },
      completion_window: { type: 'string', enum: ['24h'] },
      metadata: Metadata,
      callback_url: { type: 'string', description: 'Told of the batch’s end by a signed POST (`batch.completed`, `batch.expired`, `batch.cancelled`).' },
    },
  },
  response: { 200: { description: 'The batch, in progress.', ...Batch }, ...errorResponses(400, 401, 429, 503) },
};

export const BatchGetSchema = {
  tags,
  summary: 'One of the account’s batches.',
  params: BatchId,
  response: { 200: { description: 'The batch.', ...Batch }, ...LOOKUP_ERRORS },
};

export const BatchCancelSchema = {
  tags,
  summary: 'Cancels a batch: its pending requests are not run, running ones finish, then it is cancelled.',
  params: BatchId,
  response: { 200: { description: 'The batch, cancelling (or already cancelled).', ...Batch }, ...LOOKUP_ERRORS, ...errorResponses(409) },
};

export const BatchListSchema = {
  tags,
  summary: 'The account’s batches, newest first.',
  querystring: {
    type: 'object',
    properties: {
      limit: { type: 'string', pattern: '^(?:[1-9][0-9]?|100)$', description: 'At most this many, 1 to 100 (default 20).' },
      after: { type: 'string', description: 'The last_id of the page before.' },
    },
  },
  response: {
    200: {
      description: 'A page of batches.',
      type: 'object',
      properties: {
        object: { type: 'string', enum: ['list'] },
        data: { type: 'array', items: Batch },
        first_id: { type: ['string', 'null'] },
        last_id: { type: ['string', 'null'] },
        has_more: { type: 'boolean' },
      },
    },
    ...errorResponses(400, 401, 429, 503),
  },
};

const FileId = { type: 'object', required: ['id'], properties: { id: { type: 'string', description: 'The file id.' } } };

export const FileGetSchema = {
  tags: ['files'],
  summary: 'One of the account’s files: an upload, or a batch’s output or error file.',
  params: FileId,
  response: {
    200: {
      description: 'The file.',
      type: 'object',
      properties: {
        id: { type: 'string' },
        object: { type: 'string', enum: ['file'] },
        bytes: { type: 'integer' },
        filename: { type: 'string' },
        purpose: { type: ['string', 'null'] },
        status: { type: 'string', enum: ['processed'] },
        created_at: { type: 'integer', description: 'Unix seconds.' },
        expires_at: { type: 'integer', description: 'Unix seconds.' },
      },
    },
    ...LOOKUP_ERRORS,
  },
};

export const FileContentSchema = {
  tags: ['files'],
  summary: 'The bytes of one of the account’s files (a batch’s output, as JSONL).',
  params: FileId,
  response: {
    200: { description: 'The bytes.', content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } } },
    ...LOOKUP_ERRORS,
  },
};
