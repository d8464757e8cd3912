// The multipart form of POST /v1/audio/transcriptions, read part by part as OpenAI's endpoint
// takes it: the file streamed to disk under the upload limit, then read for its format and length;
// every text field checked here, each error naming its field.
import type { FastifyRequest } from 'fastify';
import { invalidRequest, MESSAGES } from '../errors.js';
import { type AudioContainer, inspectAudioFile } from '../media/audio-file.js';
import type { TranscriptionRequest, UploadedAudio } from '../upstreams/openai-transcriptions/client.js';
import { RESPONSE_FORMATS, type ResponseFormat } from '../upstreams/openai-transcriptions/usage.js';
import { fileSentAsText, keepPartError, type SpooledFile, spoolFile, tooLarge, uploadSpoolDir } from './uploads.js';

export interface TranscriptionForm {
  model: string;
  request: TranscriptionRequest;
  audio: UploadedAudio;
  durationSeconds: number;
  fileDigest: string;
}

export interface FormLimits {
  dataDir: string;
  /** The largest file taken, in bytes. */
  fileLimitBytes: number;
  /** Called with the model once it is named, before the file that follows it is read. */
  admitModel(model: string): Promise<void>;
}

const SINGLE_FIELDS = ['model', 'language', 'prompt', 'response_format', 'temperature', 'stream'] as const;
type SingleField = (typeof SINGLE_FIELDS)[number];
// OpenAI's SDKs send an array field once per item, its name suffixed with []; the bare name is taken too.
const LIST_FIELDS: Record<string, 'timestamp_granularities' | 'include'> = {
  'timestamp_granularities[]': 'timestamp_granularities',
  timestamp_granularities: 'timestamp_granularities',
  'include[]': 'include',
  include: 'include',
};
const GRANULARITIES = ['word', 'segment'];
const FIELD_LIMIT_BYTES = 1024 * 1024; // busboy's default fieldSize, which the server's multipart limits keep

/** How the upstream is told the file's format: a name with its extension, and its media type. */
const UPLOAD_AS: Record<AudioContainer, { extension: string; contentType: string }> = {
  wav: { extension: 'wav', contentType: 'audio/wav' },
  flac: { extension: 'flac', contentType: 'audio/flac' },
  mpeg: { extension: 'mp3', contentType: 'audio/mpeg' },
  mp4: { extension: 'm4a', contentType: 'audio/mp4' },
  ogg: { extension: 'ogg', contentType: 'audio/ogg' },
  webm: { extension: 'webm', contentType: 'audio/webm' },
};

const oneOf = (values: readonly string[]) => values.map((value) => `"${value}"`).join(', ');

export async function readTranscriptionForm(request: FastifyRequest, limits: FormLimits, spooled: SpooledFile[]): Promise<TranscriptionForm> {
  const fields: Partial<Record<SingleField, string>> = {};
  const lists = { timestamp_granularities: [] as string[], include: [] as string[] };
  let file: SpooledFile | undefined;
  for await (const part of request.parts()) {
    if (part.type === 'file') {
      if (part.fieldname !== 'file') throw invalidRequest(`${part.fieldname}: unexpected file field; send the audio as file`);
      if (file) throw invalidRequest('file: one file per request');
      keepPartError(part); // before the await below
      // A model named before the file: its own one-second hold must be covered before the audio is read.
      if (fields.model) await limits.admitModel(fields.model);
      file = await spoolFile(part, {
        dir: uploadSpoolDir(limits.dataDir),
        prefix: 'transcription',
        limitBytes: limits.fileLimitBytes,
        overLimit: () => tooLarge(`file: larger than the transcription upload limit of ${limits.fileLimitBytes} bytes`),
      });
      spooled.push(file);
      continue;
    }
    if (part.fieldname === 'file') throw fileSentAsText();
    const list = LIST_FIELDS[part.fieldname];
    if (!list && !(SINGLE_FIELDS as readonly string[]).includes(part.fieldname)) throw invalidRequest(`${part.fieldname}: unknown field`);
    // multipart cuts a field past its size limit (1 MiB) and says so only here.
    if (part.valueTruncated) throw tooLarge(`${part.fieldname}: longer than the form field limit of ${FIELD_LIMIT_BYTES} bytes`);
    if (list) lists[list].push(String(part.value));
    else fields[part.fieldname as SingleField] = String(part.value);
  }
  if (!fields.model) throw invalidRequest(MESSAGES.modelRequired);
  if (!file) throw invalidRequest('file field is required');
  const transcription = checkFields(fields, lists);
  const audio = await inspectAudioFile(file.path);
  if (!audio.ok) throw invalidRequest(audio.problem);
  const uploadAs = UPLOAD_AS[audio.container];
  return {
    model: fields.model,
    request: transcription,
    audio: { path: file.path, filename: `audio.${uploadAs.extension}`, contentType: uploadAs.contentType },
    durationSeconds: audio.seconds,
    fileDigest: file.sha256,
  };
}

function checkFields(fields: Partial<Record<SingleField, string>>, lists: { timestamp_granularities: string[]; include: string[] }): TranscriptionRequest {
  const responseFormat = (fields.response_format || 'json') as ResponseFormat;
  if (!RESPONSE_FORMATS.includes(responseFormat)) throw invalidRequest(`response_format: must be one of ${oneOf(RESPONSE_FORMATS)}`);
  const { temperature, stream } = fields;
  if (temperature !== undefined && temperature !== '') {
    const value = Number(temperature);
    if (!Number.isFinite(value) || value < 0 || value > 1) throw invalidRequest('temperature: must be a number from 0 to 1');
  }
  if (stream !== undefined && stream !== 'true' && stream !== 'false') throw invalidRequest('stream: must be "true" or "false"');
  const granularities = lists.timestamp_granularities;
  const unknown = granularities.find((granularity) => !GRANULARITIES.includes(granularity));
  if (unknown !== undefined) throw invalidRequest(`timestamp_granularities[]: must be among ${oneOf(GRANULARITIES)}, not "${unknown}"`);
  if (granularities.length > 0 && responseFormat !== 'verbose_json') {
    throw invalidRequest('timestamp_granularities[]: needs response_format "verbose_json"');
  }
  const include = lists.include.find((item) => item !== 'logprobs');
  if (include !== undefined) throw invalidRequest(`include[]: must be "logprobs", not "${include}"`);
  return {
    language: fields.language || undefined,
    prompt: fields.prompt || undefined,
    responseFormat,
    temperature: temperature || undefined,
    timestampGranularities: [...new Set(granularities)],
    include: [...new Set(lists.include)],
    stream: stream === 'true',
  };
}
