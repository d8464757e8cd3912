// POST /v1/responses: the fields the gateway reads; everything else goes to the upstream as sent.
import { METERED_ERRORS } from './errors.js';
import { headers, IdempotencyKeyHeader } from './headers.js';

export const ResponsesBody = {
  type: 'object',
  description: 'A responses-API request; fields not named here (tools, reasoning, …) go to the upstream as sent.',
  required: ['model', 'input'],
  properties: {
    model: { type: 'string', minLength: 1, description: 'A chat model of GET /v1/models.' },
    input: { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'object' } }], description: 'Text, or input items of the responses format.' },
    instructions: { type: ['string', 'null'] },
    stream: { type: ['boolean', 'null'], description: 'true: typed server-sent events, ending with response.completed.' },
    max_output_tokens: { type: ['integer', 'null'], minimum: 1, description: 'The output cap held for; above the model’s maximum is a 400.' },
  },
} as const;

/** Documented only (the route answers it as the upstream sent it). */
const Response = {
  type: 'object',
  description: 'The upstream’s response object with the public model id; every field it sends is passed on.',
  properties: {
    id: { type: 'string' },
    object: { type: 'string', enum: ['response'] },
    status: { type: 'string', description: 'completed, incomplete, …' },
    model: { type: 'string' },
    output: { type: 'array', items: { type: 'object' }, description: 'Output items (messages, tool calls, …).' },
    usage: {
      type: 'object',
      description: 'What the call is billed on.',
      properties: { input_tokens: { type: 'integer' }, output_tokens: { type: 'integer' }, total_tokens: { type: 'integer' } },
    },
  },
} as const;

export const ResponsesSchema = {
  tags: ['chat'],
  summary: 'A response (responses API) passed through, plain or as typed events.',
  description:
    'Any chat model. An upstream without the responses API has its answer (404 or 405) relayed as it came, and nothing is charged; its refusal of the request itself is a 400.',
  body: ResponsesBody,
  docsOnly: { headers: headers(IdempotencyKeyHeader) },
  response: {
    200: {
      description: 'The response; with `stream: true`, typed events ending in response.completed (which carries the usage).',
      content: {
        'application/json': { schema: Response },
        'text/event-stream': { schema: { type: 'string', description: 'Typed events; a failure ends with an `error` event.' } },
      },
    },
    ...METERED_ERRORS,
    // Relayed answers have the upstream's shape, not the gateway's error body.
    404: { description: 'The model’s upstream has no responses API: its own answer, relayed as it came.' },
    405: { description: 'The model’s upstream has no responses API: its own answer, relayed as it came.' },
  },
};
