// POST /v1/audio/translations, for the document: the form is read part by part by the handler
// (routes/translations.ts), which checks every field itself, so nothing here is validated.
import { METERED_ERRORS, UPLOAD_ERRORS } from './errors.js';
import { headers, IdempotencyKeyHeader } from './headers.js';

const TranslationForm = {
  type: 'object',
  required: ['model', 'file'],
  properties: {
    model: {
      type: 'string',
      description: 'An ast model of GET /v1/models. Sent before the file, its own minimum balance is checked before the audio is read.',
    },
    file: { type: 'string', format: 'binary', description: 'WAV audio: 16 kHz, mono, 16-bit PCM.' },
    mode: { type: 'string', enum: ['s2t', 's2s'], description: 's2t (default): translated text; s2s: translated speech.' },
    source_language: { type: 'string', description: 'A language code such as zh, en, ja.' },
    target_language: { type: 'string', description: 'A language code.' },
    voice: { type: 'string', description: 's2s: the voice to speak in; empty clones the source voice.' },
  },
} as const;

export const TranslationsSchema = {
  tags: ['audio'],
  summary: 'Speech translation of a WAV upload: text (s2t) or speech (s2s).',
  description:
    'Billed on the upstream’s tokens, held from the audio’s duration. The upload is streamed to disk under the upload limit and deleted when the call ends.',
  docsOnly: {
    body: { content: { 'multipart/form-data': { schema: TranslationForm } } },
    headers: headers(IdempotencyKeyHeader),
  },
  response: {
    200: {
      description: 'mode s2t: the translation; mode s2s: the translated speech, streamed.',
      content: {
        'application/json': {
          schema: {
            type: 'object',
            required: ['text', 'source_text'],
            properties: { text: { type: 'string', description: 'The translation.' }, source_text: { type: 'string', description: 'What was recognised.' } },
          },
        },
        'audio/ogg': { schema: { type: 'string', format: 'binary' } },
      },
    },
    ...METERED_ERRORS,
    ...UPLOAD_ERRORS,
  },
};
