// Speech: the native unidirectional body (checked only where billing and routing depend on it)
// and the OpenAI-compatible body.
import { AUDIO_FORMATS } from '../../upstreams/volc-speech/to-audio.js';
import { STREAMED_METERED_ERRORS } from './errors.js';
import { headers } from './headers.js';

export const UnidirectionalSpeechBody = {
  type: 'object',
  description: 'The upstream’s own synthesis request, passed through; only what routing and billing depend on is checked.',
  required: ['req_params'],
  properties: {
    req_params: {
      type: 'object',
      required: ['text', 'speaker'],
      properties: {
        text: { type: 'string', minLength: 1, description: 'The text to speak; billed per character, punctuation included.' },
        speaker: { type: 'string', minLength: 1, description: 'The voice.' },
        audio_params: {
          type: 'object',
          properties: { enable_subtitle: { type: 'boolean', description: 'true: `sentence` carries word timings.' } },
        },
      },
    },
  },
} as const;

export const UnidirectionalSpeechQuery = {
  type: 'object',
  properties: { model: { type: 'string', description: 'The tts model; wins over X-Api-Resource-Id.' } },
} as const;

export const OpenAiSpeechBody = {
  type: 'object',
  required: ['model', 'input', 'voice'],
  additionalProperties: false,
  properties: {
    model: { type: 'string', minLength: 1, description: 'A tts model of GET /v1/models.' },
    input: { type: 'string', minLength: 1, maxLength: 4096, description: 'The text to speak; billed per character.' },
    voice: { type: 'string', minLength: 1 },
    response_format: { type: 'string', enum: ['mp3', 'opus', 'pcm', 'wav'], description: 'mp3 by default.' },
    speed: { type: 'number', minimum: 0.5, maximum: 2 },
    instructions: { type: 'string' },
  },
} as const;

/** One line of the native stream (documented only: lines go out as the upstream sent them). */
const SpeechLine = {
  type: 'object',
  description: 'Any line may carry any of these fields.',
  properties: {
    code: { type: 'integer', description: '20000000 ends the synthesis; 55000000 is a failure.' },
    data: { type: ['string', 'null'], description: 'A base64 audio fragment.' },
    sentence: { type: 'object', description: 'Sentence and subtitle information.' },
    usage: { type: 'object', properties: { text_words: { type: 'integer', description: 'Characters billed; the last value settles.' } } },
  },
} as const;

const audio = { schema: { type: 'string', format: 'binary' } } as const;

export const UnidirectionalSpeechSchema = {
  tags: ['audio'],
  summary: 'Speech synthesis: the upstream’s newline-delimited JSON stream, passed through.',
  description: 'Routed by `?model=`, else the X-Api-Resource-Id header; takes the key as `Authorization: Bearer` or `x-api-key`.',
  body: UnidirectionalSpeechBody,
  querystring: UnidirectionalSpeechQuery,
  docsOnly: { headers: headers({ 'x-api-resource-id': { type: 'string', description: 'The tts model, when `?model=` is absent.' } }) },
  response: {
    200: {
      description: 'A stream of JSON objects, one per line (not one JSON value), as the upstream sends them.',
      content: { 'application/json': { schema: SpeechLine } },
    },
    ...STREAMED_METERED_ERRORS,
  },
};

export const OpenAiSpeechSchema = {
  tags: ['audio'],
  summary: 'Speech synthesis (OpenAI format): the audio, streamed as it is made.',
  body: OpenAiSpeechBody,
  response: {
    200: {
      description: 'The audio in `response_format`.',
      content: Object.fromEntries(Object.values(AUDIO_FORMATS).map((format) => [format.contentType, audio])),
    },
    ...STREAMED_METERED_ERRORS,
  },
};
