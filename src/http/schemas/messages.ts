// POST /v1/messages: the messages format's required fields; the rest is checked by the translator
// or passed to a messages-native upstream as the caller sent it.
import { ANTHROPIC_VERSION } from '../../upstreams/anthropic/client.js';
import { errorResponses, METERED_ERRORS } from './errors.js';
import { headers, IdempotencyKeyHeader } from './headers.js';

/** `then` applies to a block or source whose `type` is `type`. */
const whenType = (type: string, then: object) => ({ if: { required: ['type'], properties: { type: { const: type } } }, then });
const text = { type: 'string' } as const;
// Named distinctly: the OpenAPI document lists the body's definitions among its shared schemas,
// where a reference to `#/definitions/…` becomes `#/components/schemas/…` (openapi.ts).
const blocks = { type: 'array', items: { $ref: '#/definitions/MessagesContentBlock' } } as const;

/** Where a block's bytes come from: the sources of src/upstreams/anthropic/types.ts, each with its own fields. */
const source = (types: readonly string[]) => ({
  type: 'object',
  required: ['type'],
  properties: { type: { type: 'string', enum: types } },
  allOf: [
    whenType('base64', { required: ['media_type', 'data'], properties: { media_type: text, data: text } }),
    whenType('url', { required: ['url'], properties: { url: text } }),
    whenType('text', { required: ['data'], properties: { data: text } }),
    whenType('content', { required: ['content'], properties: { content: { anyOf: [text, blocks] } } }),
  ],
});

/**
 * A content block of a type the gateway reads carries what that type needs: the translator reads
 * these fields, and a block without them was a 502 (no source) or a charge for a garbled prompt.
 * Blocks of other types go to a messages-native upstream as sent.
 */
const ContentBlock = {
  type: 'object',
  required: ['type'],
  properties: { type: text },
  allOf: [
    whenType('text', { required: ['text'], properties: { text } }),
    whenType('image', { required: ['source'], properties: { source: source(['base64', 'url']) } }),
    whenType('document', { required: ['source'], properties: { source: source(['base64', 'text', 'url', 'content']) } }),
    whenType('tool_use', { required: ['id', 'name'], properties: { id: text, name: text, input: { type: 'object' } } }),
    whenType('tool_result', { required: ['tool_use_id'], properties: { tool_use_id: text, content: { anyOf: [text, blocks] } } }),
  ],
} as const;

export const MessagesBody = {
  type: 'object',
  description: 'A messages-format request; fields not named here go to a messages-native upstream as sent.',
  required: ['model', 'max_tokens', 'messages'],
  definitions: { MessagesContentBlock: ContentBlock },
  properties: {
    model: { type: 'string', minLength: 1, description: 'A chat model of GET /v1/models, messages-native or OpenAI-style (translated both ways).' },
    max_tokens: { type: 'integer', minimum: 1, description: 'The output cap held for; above the model’s maximum is a 400.' },
    messages: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        required: ['role', 'content'],
        properties: {
          role: { type: 'string', enum: ['user', 'assistant'] },
          content: { anyOf: [text, blocks] },
        },
      },
    },
    system: {
      anyOf: [
        { type: 'string' },
        { type: 'array', items: { type: 'object', required: ['type', 'text'], properties: { type: { const: 'text' }, text: { type: 'string' } } } },
      ],
    },
    stop_sequences: { type: 'array', items: { type: 'string' } },
    stream: { type: 'boolean' },
    temperature: { type: 'number', minimum: 0, maximum: 1 },
    top_p: { type: 'number', minimum: 0, maximum: 1 },
    top_k: { type: 'integer', minimum: 0 },
    tools: {
      type: 'array',
      items: { type: 'object', required: ['name'], properties: { name: { type: 'string', minLength: 1, maxLength: 128 }, input_schema: { type: 'object' } } },
    },
    tool_choice: {
      type: 'object',
      required: ['type'],
      properties: { type: { type: 'string', enum: ['auto', 'any', 'tool', 'none'] }, name: { type: 'string' }, disable_parallel_tool_use: { type: 'boolean' } },
    },
    metadata: { type: 'object', properties: { user_id: { type: ['string', 'null'] } } },
  },
} as const;

/** Documented only (the route answers it as built): the message the call produced. */
const Message = {
  type: 'object',
  description: 'The message: a messages-native upstream’s as it sent it (with the public model id), or one translated from a chat completion.',
  properties: {
    id: { type: 'string' },
    type: { type: 'string', enum: ['message'] },
    role: { type: 'string', enum: ['assistant'] },
    content: { type: 'array', items: { type: 'object', properties: { type: { type: 'string' }, text: { type: 'string' } } } },
    model: { type: 'string' },
    stop_reason: { type: ['string', 'null'] },
    stop_sequence: { type: ['string', 'null'] },
    usage: {
      type: 'object',
      description: 'What the call is billed on.',
      properties: { input_tokens: { type: 'integer' }, output_tokens: { type: 'integer' } },
    },
  },
} as const;

const VersionHeader = {
  type: 'string',
  enum: [ANTHROPIC_VERSION],
  description: 'The messages version: one of anthropic-version and vendor-version is required, with this value.',
} as const;

export const MessagesSchema = {
  tags: ['chat'],
  summary: 'A message (messages format), plain or streamed, from any chat model.',
  description: 'Takes the key as `x-api-key` or `Authorization: Bearer`. Held, settled and refunded as a chat completion is.',
  body: MessagesBody,
  docsOnly: {
    headers: headers({ 'anthropic-version': VersionHeader, 'vendor-version': VersionHeader, ...IdempotencyKeyHeader }),
  },
  response: {
    200: {
      description: 'The message; with `stream: true`, the messages event stream (message_start … message_stop).',
      content: {
        'application/json': { schema: Message },
        'text/event-stream': { schema: { type: 'string', description: 'Named events of the messages format; a failure ends with an `error` event.' } },
      },
    },
    ...METERED_ERRORS,
  },
};

/** The messages request without its output cap and stream flag: what count_tokens counts. */
const { max_tokens: _, stream: __, ...countedProperties } = MessagesBody.properties;

export const MessagesCountTokensSchema = {
  tags: ['chat'],
  summary: "The input tokens of a messages request (the Anthropic SDK's messages.countTokens), on any chat model.",
  description:
    "Free, and rate-limited as every call. Asked of the upstream where it counts (a messages-native channel; a gemini channel through its countTokens), else counted by the gateway's tokenizer, the count its holds use.",
  body: {
    ...MessagesBody,
    description: 'A messages request without `max_tokens` and `stream`.',
    required: ['model', 'messages'],
    properties: countedProperties,
  },
  docsOnly: { headers: headers({ 'anthropic-version': VersionHeader, 'vendor-version': VersionHeader }) },
  response: {
    200: {
      description: 'The count.',
      type: 'object',
      required: ['input_tokens'],
      properties: { input_tokens: { type: 'integer', description: 'The input tokens of the request.' } },
    },
    ...errorResponses(400, 401, 429, 500, 502, 503),
  },
} as const;
