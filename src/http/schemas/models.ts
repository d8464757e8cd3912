// GET /v1/models and GET /v1/models/{id}: the catalogue.
import { MODEL_TYPES } from '../../config/schema.js';
import { errorResponses } from './errors.js';

const tags = ['models'];

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
