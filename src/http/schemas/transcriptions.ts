// POST /v1/audio/transcriptions, for the document: the form is read part by part by the handler
// (http/transcription-form.ts), which checks every field itself, so nothing here is validated.
import { METERED_ERRORS, UPLOAD_ERRORS } from './errors.js';
import { headers, IdempotencyKeyHeader } from './headers.js';

const TranscriptionForm = {
  type: 'object',
  required: ['model', 'file'],
  properties: {
    model: {
      type: 'string',
      description: 'A transcription model of GET /v1/models. Sent before the file, its own minimum balance is checked before the audio is read.',
    },
    file: {
      type: 'string',
      format: 'binary',
      description: 'The recording: flac, m4a, mp3, mp4, mpeg, mpga, ogg, wav or webm (told by its content, not its name); 25 MB at most.',
    },
    language: { type: 'string', description: 'The language spoken, as ISO-639-1 (en, zh, ja…).' },
    prompt: { type: 'string', description: 'Text to guide the transcript’s style, or the end of the audio before this one.' },
    response_format: { type: 'string', enum: ['json', 'text', 'srt', 'verbose_json', 'vtt'], description: 'json (default), text, srt, verbose_json or vtt.' },
    temperature: { type: 'number', minimum: 0, maximum: 1, description: 'Sampling temperature, 0 to 1.' },
    'timestamp_granularities[]': {
      type: 'array',
      items: { type: 'string', enum: ['word', 'segment'] },
      description: 'With response_format verbose_json: word and/or segment timestamps.',
    },
    'include[]': { type: 'array', items: { type: 'string', enum: ['logprobs'] }, description: 'logprobs: the log probabilities of the transcript’s tokens.' },
    stream: { type: 'boolean', description: 'true: the transcript streamed as SSE, transcript.text.delta events then transcript.text.done.' },
  },
} as const;

const Transcription = {
  type: 'object',
  required: ['text'],
  properties: {
    text: { type: 'string', description: 'The transcript.' },
    usage: { type: 'object', description: 'The upstream’s usage: {type: "duration", seconds} or {type: "tokens", input_tokens, output_tokens, …}.' },
    duration: { type: 'number', description: 'verbose_json: the audio’s length in seconds.' },
    language: { type: 'string', description: 'verbose_json: the language spoken.' },
    segments: { type: 'array', items: { type: 'object' }, description: 'verbose_json: the transcript’s segments with their times.' },
    words: { type: 'array', items: { type: 'object' }, description: 'verbose_json with word timestamps: each word with its times.' },
  },
} as const;

export const TranscriptionsSchema = {
  tags: ['audio'],
  summary: 'Transcribe a recording (OpenAI audio transcriptions).',
  description:
    'Billed per second of audio: held from the length the file’s header states (rounded up to whole seconds), settled on the upstream’s usage ' +
    '(seconds, or tokens for a model priced in tokens), never above the hold. The upload is streamed to disk under the limit and deleted when the call ends; ' +
    'a Content-Length past the limit is refused before the body is read.',
  docsOnly: {
    body: { content: { 'multipart/form-data': { schema: TranscriptionForm } } },
    headers: headers(IdempotencyKeyHeader),
  },
  response: {
    200: {
      description: 'json and verbose_json: the transcription; text, srt and vtt: the transcript as text; stream: SSE events.',
      content: {
        'application/json': { schema: Transcription },
        'text/plain': { schema: { type: 'string' } },
        'text/event-stream': { schema: { type: 'string', description: 'transcript.text.delta events, then transcript.text.done with the usage.' } },
      },
    },
    ...METERED_ERRORS,
    ...UPLOAD_ERRORS,
  },
};
