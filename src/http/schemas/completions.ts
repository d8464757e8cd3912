// POST /v1/completions: OpenAI's legacy text completions. The forms of `prompt` are checked in the
// route first (a message naming `prompt`); the schema states them for the document. Fields not named
// here (logprobs, echo, suffix, user…) go to the upstream as sent.
import { METERED_ERRORS } from './errors.js';
import { headers, IdempotencyKeyHeader } from './headers.js';

const tokenIds = { type: 'array', minItems: 1, items: { type: 'integer', minimum: 0 } } as const;

export const CompletionBody = {
  type: 'object',
  description: 'An OpenAI completion request; fields not named here (logprobs, echo, suffix, presence_penalty, user, …) go to the upstream as sent.',
  required: ['model', 'prompt'],
  properties: {
    model: { type: 'string', minLength: 1, description: 'A chat model of GET /v1/models served by an OpenAI or Azure OpenAI channel.' },
    prompt: {
      description:
        'The prompt: a string, an array of strings, an array of token ids, or an array of token-id arrays (one completion per prompt). All of it counts towards the hold.',
      anyOf: [{ type: 'string' }, { type: 'array', minItems: 1, items: { type: 'string' } }, tokenIds, { type: 'array', minItems: 1, items: tokenIds }],
    },
    suffix: { type: ['string', 'null'], description: 'Text after the completion; counted with the prompt.' },
    stream: { type: ['boolean', 'null'], description: 'true: server-sent events as the upstream sends them.' },
    stream_options: { type: ['object', 'null'], properties: { include_usage: { type: ['boolean', 'null'] } } },
    max_tokens: {
      type: ['integer', 'null'],
      minimum: 0,
      description: 'The output cap of each choice, held for; above the model’s maximum is a 400. Absent: the model’s maximum is held for.',
    },
    n: { type: ['integer', 'null'], minimum: 1, maximum: 128, description: 'Choices per prompt; the hold covers the output cap of each.' },
    best_of: { type: ['integer', 'null'], minimum: 1, maximum: 128, description: 'Choices made upstream per prompt (the best n returned); each is held for.' },
    temperature: { type: ['number', 'null'], minimum: 0, maximum: 2 },
    top_p: { type: ['number', 'null'], minimum: 0, maximum: 1 },
    stop: { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }, { type: 'null' }] },
  },
} as const;

/** Documented only (routes answer it as the upstream sent it): the fields every text_completion has. */
const Completion = {
  type: 'object',
  description: 'The upstream’s text_completion with `model` set to the public model id; every field it sends is passed on.',
  properties: {
    id: { type: 'string' },
    object: { type: 'string', enum: ['text_completion'] },
    created: { type: 'integer', description: 'Unix seconds.' },
    model: { type: 'string', description: 'The public model id that was asked for.' },
    choices: {
      type: 'array',
      items: {
        type: 'object',
        properties: { index: { type: 'integer' }, text: { type: 'string' }, logprobs: {}, finish_reason: { type: ['string', 'null'] } },
      },
    },
    usage: {
      type: 'object',
      description: 'What the call is billed on.',
      properties: { prompt_tokens: { type: 'integer' }, completion_tokens: { type: 'integer' }, total_tokens: { type: 'integer' } },
    },
  },
} as const;

export const CompletionSchema = {
  tags: ['chat'],
  summary: 'A text completion (OpenAI’s legacy completions format), plain or streamed.',
  description:
    'Routed by `model`, a chat model served by an OpenAI or Azure OpenAI channel (other channels have no completions API: a 400 naming `model`). Funds for the prompt and the output cap of every choice are held first, then settled on the upstream’s usage; an upstream failure costs nothing.',
  body: CompletionBody,
  docsOnly: { headers: headers(IdempotencyKeyHeader) },
  response: {
    200: {
      description: 'The completion; with `stream: true`, its chunks as server-sent events.',
      content: {
        'application/json': { schema: Completion },
        'text/event-stream': {
          schema: {
            type: 'string',
            description: '`data:` lines of text_completion objects, then `data: [DONE]`; a failure ends with a `data:` line carrying `error`.',
          },
        },
      },
    },
    ...METERED_ERRORS,
  },
};
