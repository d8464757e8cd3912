// GET /v1/models and GET /v1/models/{id}: the catalogue.
import { MODEL_TYPES } from '../../config/schema.js';
import { errorResponses } from './errors.js';

const tags = ['models'];

const perToken = (what: string) => ({ type: 'string', description: `Per ${what} token, in balance units (1 is 1 000 000 micros).` }) as const;
const perUnit = (what: string) => ({ type: 'string', description: `Per ${what}, in balance units.` }) as const;
const PRICING_PROPERTIES = {
  prompt: perToken('fresh input'),
  completion: perToken('output'),
  input_cache_read: perToken('cached input (a cache read)'),
  input_cache_write: perToken('cache write (5-minute)'),
  input_cache_write_1h: perToken('cache write (1-hour)'),
  internal_reasoning: perToken('reasoning'),
  input_audio: perToken('audio input'),
  output_audio: perToken('audio output'),
  input_image: perToken('image input'),
  request: perUnit('request'),
  web_search: perUnit('web search'),
  image: perUnit('image made'),
  character: perUnit('character'),
  second: perUnit('second'),
} as const;

const Pricing = {
  type: 'object',
  description:
    'The prices the caller pays (its plan’s), in OpenRouter’s shape: a decimal string per unit for each dimension the model prices; a dimension left out is billed at the price it falls back to (cache and audio input at `prompt`, reasoning and audio output at `completion`).',
  properties: {
    ...PRICING_PROPERTIES,
    tiers: {
      type: 'array',
      description: 'Long-context prices: past `above_input_tokens` of prompt, these prices replace those above.',
      items: { type: 'object', properties: { above_input_tokens: { type: 'integer' }, ...PRICING_PROPERTIES } },
    },
  },
} as const;

const Model = {
  type: 'object',
  properties: {
    id: { type: 'string', description: 'The public model id, as requests name it.' },
    object: { type: 'string', enum: ['model'] },
    created: { type: 'integer', description: 'Unix seconds.' },
    owned_by: { type: 'string' },
    model_type: {
      type: 'string',
      enum: [...MODEL_TYPES],
      description: 'Which endpoints serve it (any chat model also serves /v1/responses and /v1/messages).',
    },
    pricing: Pricing,
  },
} as const;

export const ListModelsSchema = {
  tags,
  summary: 'The catalogue, in OpenAI’s list shape plus model_type.',
  querystring: { type: 'object', properties: { type: { type: 'string', enum: [...MODEL_TYPES], description: 'Only models of this type.' } } },
  response: {
    200: {
      description: 'The models; for a caller that sends `x-goog-api-key` (Google’s SDK), `models` instead: the chat models in the Gemini API’s shape.',
      type: 'object',
      properties: {
        object: { type: 'string', enum: ['list'] },
        data: { type: 'array', items: Model },
        models: { type: 'array', items: { type: 'object' } },
      },
    },
    ...errorResponses(400, 401, 429, 503),
  },
};

export const GetModelSchema = {
  tags,
  summary: 'One model of the catalogue.',
  params: { type: 'object', required: ['id'], properties: { id: { type: 'string', description: 'The model id.' } } },
  response: { 200: { ...Model, description: 'The model.' }, ...errorResponses(401, 404, 429, 503) },
};
