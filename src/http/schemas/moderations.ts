// POST /v1/moderations: OpenAI's moderation request. The forms of `input` are checked in the route
// first (upstreams/openai-moderations/input.ts); the schema states them for the document.
import { METERED_ERRORS } from './errors.js';
import { headers, IdempotencyKeyHeader } from './headers.js';

const MultimodalItem = {
  anyOf: [
    { type: 'object', required: ['type', 'text'], properties: { type: { type: 'string', enum: ['text'] }, text: { type: 'string' } } },
    {
      type: 'object',
      required: ['type', 'image_url'],
      properties: {
        type: { type: 'string', enum: ['image_url'] },
        image_url: { type: 'object', required: ['url'], properties: { url: { type: 'string', minLength: 1, description: 'An https URL or a data URL.' } } },
      },
    },
  ],
} as const;

export const ModerationBody = {
  type: 'object',
  description: 'An OpenAI moderation request; fields not named here go to the upstream as sent.',
  required: ['model', 'input'],
  properties: {
    model: { type: 'string', minLength: 1, description: 'A moderation model of GET /v1/models.' },
    input: {
      description: 'What to classify: a string, an array of strings (one result each), or an array of text and image_url items (one result for them all).',
      anyOf: [
        { type: 'string', minLength: 1 },
        { type: 'array', minItems: 1, items: { type: 'string' } },
        { type: 'array', minItems: 1, items: MultimodalItem },
      ],
    },
  },
} as const;

const Categories = (value: object, description: string) => ({ type: 'object', description, additionalProperties: value });

/** Documented only (the answer is the upstream's, with the public model id). */
const ModerationAnswer = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    model: { type: 'string', description: 'The public model id that was asked for.' },
    results: {
      type: 'array',
      description: 'One per input string, or one for a multimodal array.',
      items: {
        type: 'object',
        properties: {
          flagged: { type: 'boolean', description: 'Whether any category is flagged.' },
          categories: Categories(
            { type: ['boolean', 'null'] },
            'By OpenAI’s category: harassment, harassment/threatening, hate, hate/threatening, illicit, illicit/violent, self-harm, self-harm/intent, self-harm/instructions, sexual, sexual/minors, violence, violence/graphic.',
          ),
          category_scores: Categories({ type: 'number' }, 'Each category’s score, from 0 to 1.'),
          category_applied_input_types: Categories({ type: 'array', items: { type: 'string' } }, 'The input types each score applies to.'),
        },
      },
    },
  },
} as const;

export const ModerationSchema = {
  tags: ['moderations'],
  summary: 'Classifies text and images against OpenAI’s content categories (OpenAI format).',
  description: 'Routed by `model`. Billed one call at the model’s price per call on success (which may be 0), nothing on failure.',
  body: ModerationBody,
  docsOnly: { headers: headers(IdempotencyKeyHeader) },
  response: {
    200: { description: 'One result per input.', content: { 'application/json': { schema: ModerationAnswer } } },
    ...METERED_ERRORS,
  },
};
