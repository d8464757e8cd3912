// POST /v1/chat/completions: the fields the gateway relies on. Everything else passes through
// to the upstream untouched (additionalProperties), as OpenAI-compatible clients expect.
import { METERED_ERRORS } from './errors.js';
import { headers, IdempotencyKeyHeader } from './headers.js';

export const ChatCompletionBody = {
  type: 'object',
  description: 'An OpenAI chat completion request; fields not named here (tools, response_format, …) go to the upstream as sent.',
  required: ['model', 'messages'],
  properties: {
    model: { type: 'string', minLength: 1, description: 'A chat model of GET /v1/models.' },
    messages: {
      type: 'array',
      minItems: 1,
      description: 'The conversation, oldest first; all of it counts towards the hold.',
      items: {
        type: 'object',
        required: ['role'],
        properties: { role: { type: 'string', enum: ['system', 'developer', 'user', 'assistant', 'tool', 'function'] } },
      },
    },
    stream: { type: 'boolean', description: 'true: server-sent events as the upstream sends them.' },
    stream_options: { type: ['object', 'null'], properties: { include_usage: { type: 'boolean' } } },
    max_tokens: { type: ['integer', 'null'], minimum: 1, description: 'The output cap held for; above the model’s maximum is a 400.' },
    max_completion_tokens: { type: ['integer', 'null'], minimum: 1, description: 'As max_tokens, and preferred to it.' },
    n: { type: ['integer', 'null'], minimum: 1, maximum: 1, description: 'One choice only.' },
    temperature: { type: ['number', 'null'], minimum: 0, maximum: 2 },
    top_p: { type: ['number', 'null'], minimum: 0, maximum: 1 },
  },
} as const;

/** Documented only (routes answer it as the upstream sent it): the fields every chat.completion has. */
const ChatCompletion = {
  type: 'object',
  description: 'The upstream’s chat.completion with `model` set to the public model id; every field it sends is passed on.',
  properties: {
    id: { type: 'string' },
    object: { type: 'string', enum: ['chat.completion'] },
    created: { type: 'integer', description: 'Unix seconds.' },
    model: { type: 'string', description: 'The public model id that was asked for.' },
    choices: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          index: { type: 'integer' },
          message: { type: 'object', properties: { role: { type: 'string' }, content: { type: ['string', 'null'] }, tool_calls: { type: 'array' } } },
          finish_reason: { type: ['string', 'null'] },
        },
      },
    },
    usage: {
      type: 'object',
      description: 'What the call is billed on.',
      properties: { prompt_tokens: { type: 'integer' }, completion_tokens: { type: 'integer' }, total_tokens: { type: 'integer' } },
    },
  },
} as const;

export const ChatCompletionSchema = {
  tags: ['chat'],
  summary: 'A chat completion (OpenAI format), plain or streamed.',
  description:
    'Routed by `model`. Funds for the prompt and the output cap are held first, then settled on the upstream’s usage; an upstream failure costs nothing.',
  body: ChatCompletionBody,
  docsOnly: { headers: headers(IdempotencyKeyHeader) },
  response: {
    200: {
      description: 'The completion; with `stream: true`, its chunks as server-sent events.',
      content: {
        'application/json': { schema: ChatCompletion },
        'text/event-stream': {
          schema: {
            type: 'string',
            description: '`data:` lines of chat.completion.chunk objects, then `data: [DONE]`; a failure ends with a `data:` line carrying `error`.',
          },
        },
      },
    },
    ...METERED_ERRORS,
  },
};
