// The Gemini API's calls (generateContent, streamGenerateContent, countTokens) and its model list.
// The body's fields are checked by the translator, or passed to a gemini upstream as sent.
import { errorResponses, METERED_ERRORS } from './errors.js';
import { headers, IdempotencyKeyHeader } from './headers.js';

const tags = ['gemini'];
const KeyInQuery = {
  key: { type: 'string', description: 'The API key, as Google’s clients may send it; `x-goog-api-key` or `Authorization: Bearer` work too.' },
};

const Part = {
  type: 'object',
  description: 'One of text, inlineData, fileData, functionCall, functionResponse.',
  properties: {
    text: { type: 'string' },
    thought: { type: 'boolean' },
    inlineData: { type: 'object', required: ['mimeType', 'data'], properties: { mimeType: { type: 'string' }, data: { type: 'string' } } },
    fileData: { type: 'object', required: ['fileUri'], properties: { mimeType: { type: 'string' }, fileUri: { type: 'string' } } },
    functionCall: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, args: { type: 'object' }, id: { type: 'string' } } },
    functionResponse: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, response: { type: 'object' }, id: { type: 'string' } } },
  },
} as const;

const Content = {
  type: 'object',
  required: ['parts'],
  properties: { role: { type: 'string', enum: ['user', 'model'] }, parts: { type: 'array', items: Part } },
} as const;

const GenerateContentBody = {
  type: 'object',
  description:
    'A generateContent request (countTokens takes the same, or it wrapped in `generateContentRequest`); fields not named here go to a gemini upstream as sent.',
  properties: {
    contents: { type: 'array', items: Content },
    systemInstruction: { type: 'object', properties: { parts: { type: 'array', items: Part } } },
    tools: { type: 'array', items: { type: 'object' } },
    toolConfig: { type: 'object' },
    generationConfig: {
      type: 'object',
      properties: {
        maxOutputTokens: { type: 'integer', minimum: 1, description: 'The output cap held for; above the model’s maximum is a 400.' },
        temperature: { type: 'number', minimum: 0, maximum: 2 },
        topP: { type: 'number', minimum: 0, maximum: 1 },
        topK: { type: 'integer', minimum: 0 },
        stopSequences: { type: 'array', items: { type: 'string' } },
        candidateCount: { type: 'integer', minimum: 1 },
      },
    },
    generateContentRequest: { type: 'object' },
  },
} as const;

export const GeminiCallSchema = {
  tags,
  summary: 'Gemini API: `{model}:generateContent`, `{model}:streamGenerateContent` or `{model}:countTokens`, on any chat model.',
  description:
    'Served natively by a gemini channel and translated for any other. Held, settled and refunded as a chat completion is; countTokens is free (and rate-limited).',
  params: {
    type: 'object',
    required: ['id'],
    properties: { id: { type: 'string', description: 'A chat model id of GET /v1beta/models and the method: `sandbox-gemini:generateContent`.' } },
  },
  querystring: {
    type: 'object',
    properties: { alt: { type: 'string', enum: ['sse'], description: 'Stream as server-sent events (else one JSON array).' }, ...KeyInQuery },
  },
  body: GenerateContentBody,
  docsOnly: { headers: headers({ ...IdempotencyKeyHeader }) },
  response: {
    200: {
      description: 'The GenerateContentResponse, `{totalTokens}` for countTokens, or the stream (SSE with alt=sse, else a JSON array).',
      content: {
        'application/json': {
          schema: {
            type: 'object',
            properties: { candidates: { type: 'array', items: { type: 'object' } }, usageMetadata: { type: 'object' }, totalTokens: { type: 'integer' } },
          },
        },
        'text/event-stream': {
          schema: { type: 'string', description: 'One GenerateContentResponse per `data:` event; a failure ends with an `error` object.' },
        },
      },
    },
    ...METERED_ERRORS,
  },
};

const GeminiModel = {
  type: 'object',
  properties: {
    name: { type: 'string', description: '`models/` and the public model id.' },
    baseModelId: { type: 'string' },
    version: { type: 'string' },
    displayName: { type: 'string' },
    inputTokenLimit: { type: 'integer' },
    outputTokenLimit: { type: 'integer' },
    supportedGenerationMethods: { type: 'array', items: { type: 'string' } },
  },
} as const;

export const GeminiListModelsSchema = {
  tags,
  summary: 'The chat models, in the Gemini API’s list shape (GET /v1/models stays OpenAI’s).',
  querystring: { type: 'object', properties: KeyInQuery },
  response: {
    200: { description: 'The models.', type: 'object', properties: { models: { type: 'array', items: GeminiModel } } },
    ...errorResponses(401, 429, 503),
  },
};

export const GeminiGetModelSchema = {
  tags,
  summary: 'One chat model, in the Gemini API’s shape.',
  params: { type: 'object', required: ['id'], properties: { id: { type: 'string', description: 'The model id.' } } },
  querystring: { type: 'object', properties: KeyInQuery },
  response: { 200: { ...GeminiModel, description: 'The model.' }, ...errorResponses(401, 404, 429, 503) },
};
