// POST /v1/audio/translations: a whole WAV in (multipart), translated text (s2t) or translated
// speech streamed as Ogg (s2s) out. Billed on the upstream's token usage; the hold is sized from
// the audio's duration. Before a byte of the body is read: the key, the rate limit and a balance
// that covers one second of audio. The file is streamed to disk under the upload limit, checked
// from there, and its PCM streamed from disk to the upstream; nothing is held before it passes.
import { createReadStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { PassThrough } from 'node:stream';
import type { FastifyPluginAsync, FastifyRequest, RouteHandlerMethod } from 'fastify';
import type { Units } from '../../billing/prices.js';
import { requireBalanceFor } from '../../billing/upload-minimum.js';
import type { ModelConfig } from '../../config/schema.js';
import { invalidRequest, MESSAGES } from '../../errors.js';
import { holdFor, type Pipeline } from '../../pipeline/metered-call.js';
import type { CallArgs, MeteredAnswer } from '../../pipeline/types.js';
import type { Store } from '../../store/open.js';
import { translateSpeech } from '../../upstreams/volc-ast/client.js';
import { TranslationMeter } from '../../upstreams/volc-ast/stream-meter.js';
import { translationWavProblem } from '../../upstreams/volc-ast/wav.js';
import { inspectWavFile } from '../../upstreams/volc-ast/wav-file.js';
import { requireCaller } from '../auth.js';
import { meteredHandler } from '../metered-handler.js';
import { TranslationsSchema } from '../schemas/translations.js';
import { serializedAsBuilt } from '../serialized-as-built.js';
import { admitUpload, endUnreadUpload, fileSentAsText, keepPartError, type SpooledFile, spoolFile, tooLarge, uploadSpoolDir } from '../uploads.js';

interface TranslationRequest {
  model: string | undefined;
  mode: 's2t' | 's2s';
  sourceLanguage?: string;
  targetLanguage?: string;
  voice?: string;
  /** The upload on disk, and where its samples are in it. */
  audio: { path: string; dataOffset: number; dataLength: number };
  durationMs: number;
  fileDigest: string;
}

interface TranslationDeps {
  pipeline: Pipeline;
  store: Store;
  dataDir: string;
  uploadLimitBytes: number;
}

// Hold estimate only (settlement uses the upstream's count): speech runs near 25 tokens a second
// in, and a translation rarely says more than 10 tokens a second back.
const INPUT_TOKENS_PER_SECOND = 25;
const OUTPUT_TOKENS_PER_SECOND = 10;
const TEXT_FIELDS = ['model', 'mode', 'source_language', 'target_language', 'voice'] as const;
const FIELD_LIMIT_BYTES = 1024 * 1024; // busboy's default fieldSize, which the server's multipart limits keep
type TextField = (typeof TEXT_FIELDS)[number];

const estimateFor = (durationMs: number): Units => {
  const seconds = Math.max(1, Math.ceil(durationMs / 1000));
  return { input_token: seconds * INPUT_TOKENS_PER_SECOND, output_token: seconds * OUTPUT_TOKENS_PER_SECOND };
};
// The estimate rounds up to a whole second, so no translation holds less than one second's worth.
const oneSecondHold = (model: ModelConfig) => holdFor(model, estimateFor(1_000));

async function readTranslationForm(request: FastifyRequest, deps: TranslationDeps, spooled: SpooledFile[]): Promise<TranslationRequest> {
  const fields: Partial<Record<TextField, string>> = {};
  let file: SpooledFile | undefined;
  for await (const part of request.parts()) {
    if (part.type === 'file') {
      if (part.fieldname !== 'file') throw invalidRequest(`${part.fieldname}: unexpected file field; send the audio as file`);
      keepPartError(part); // before the await below
      // A model named before the file: its own one-second hold must be covered before the audio is read.
      if (fields.model) await admitModel(deps, request, fields.model);
      file = await spoolFile(part, {
        dir: uploadSpoolDir(deps.dataDir),
        prefix: 'translation',
        limitBytes: deps.uploadLimitBytes,
        overLimit: () => tooLarge(`file: larger than the upload limit of ${deps.uploadLimitBytes} bytes`),
      });
      spooled.push(file);
    } else if ((TEXT_FIELDS as readonly string[]).includes(part.fieldname)) {
      // multipart cuts a field past its size limit (1 MiB) and says so only here: the cut value
      // was sent upstream and charged as if it were what the caller wrote.
      if (part.valueTruncated) throw tooLarge(`${part.fieldname}: longer than the form field limit of ${FIELD_LIMIT_BYTES} bytes`);
      fields[part.fieldname as TextField] = String(part.value);
    } else if (part.fieldname === 'file') {
      throw fileSentAsText();
    } else {
      throw invalidRequest(`${part.fieldname}: unknown field`);
    }
  }
  if (!fields.model) throw invalidRequest(MESSAGES.modelRequired);
  if (!file) throw invalidRequest('file field is required');
  const mode = fields.mode ?? 's2t';
  if (mode !== 's2t' && mode !== 's2s') throw invalidRequest('mode: must be one of "s2t", "s2s"');
  const wav = await inspectWavFile(file.path);
  const problem = translationWavProblem(wav);
  if (problem || !wav.ok) throw invalidRequest(problem ?? 'file: not a RIFF/WAVE file');
  return {
    model: fields.model,
    mode,
    sourceLanguage: fields.source_language || undefined,
    targetLanguage: fields.target_language || undefined,
    voice: fields.voice || undefined,
    audio: { path: file.path, dataOffset: wav.dataOffset, dataLength: wav.dataLength },
    durationMs: wav.durationMs,
    fileDigest: file.sha256,
  };
}

/** The named model exists, and the balance covers one second of audio at its price. */
async function admitModel(deps: TranslationDeps, request: FastifyRequest, modelId: string) {
  const model = deps.pipeline.catalogueFor(requireCaller(request).livemode).resolve(modelId, 'ast');
  await requireBalanceFor(deps.store, { accountId: requireCaller(request).accountId, minimumMicros: oneSecondHold(model.config) });
}

async function translate({ body, model, estimate, signal }: CallArgs<TranslationRequest>): Promise<MeteredAnswer> {
  const { channel } = model.upstream;
  const { path: wavPath, dataOffset, dataLength } = body.audio;
  // Read from disk while it is sent (opened once the session has started), never whole in memory.
  const pcm = {
    length: dataLength,
    open: () => createReadStream(wavPath, { start: dataOffset, end: dataOffset + dataLength - 1, highWaterMark: 64 * 1024 }),
  };
  const common = {
    baseUrl: channel.base_url,
    appId: channel.app_id,
    accessKey: channel.api_key,
    resourceId: channel.resource_id,
    sourceLanguage: body.sourceLanguage,
    targetLanguage: body.targetLanguage,
    voice: body.voice,
    pcm,
    signal,
  };
  if (body.mode === 's2t') {
    const result = await translateSpeech({ ...common, mode: 's2t' });
    return { kind: 'json', body: { text: result.text, source_text: result.sourceText }, units: result.usage ?? estimate };
  }
  const audio = new PassThrough();
  const meter = new TranslationMeter(estimate, { durationMs: body.durationMs, inputTokensPerSecond: INPUT_TOKENS_PER_SECOND });
  const onAudio = (chunk: Buffer) => {
    meter.observeAudio(chunk);
    audio.write(chunk);
  };
  translateSpeech({ ...common, mode: 's2s', onAudio, onTranslation: (sentence) => meter.observeTranslation(sentence) }).then(
    (result) => {
      meter.finish(result.usage);
      audio.end();
    },
    (error: Error) => audio.destroy(error),
  );
  return { kind: 'stream', contentType: 'audio/ogg', body: audio, meter };
}

export const translationRoutes: FastifyPluginAsync<TranslationDeps> = async (app, deps) => {
  // Before any part is read the model is unknown: the cheapest translation model's second is the
  // least any upload here can cost. A model named before the file raises it to that model's.
  const cheapestHold = Math.min(...deps.pipeline.catalogue.list('ast').map((model) => oneSecondHold(model.config)));
  const minimumMicros = Number.isFinite(cheapestHold) ? cheapestHold : 0;
  const spooledBy = new WeakMap<FastifyRequest, TranslationRequest>();

  const handleMeteredCall = meteredHandler<TranslationRequest>(deps, {
    endpoint: 'audio.translations',
    modelType: 'ast',
    // Already read (and admitted) by the handler below, before the pipeline runs.
    admitsBeforeBody: true,
    readBody: async (request) => spooledBy.get(request)!,
    // The file's digest, not its bytes (nor where they were kept), identifies a request for Idempotency-Key.
    fingerprint: ({ audio: _audio, ...rest }) => rest,
    streams: (body) => body.mode === 's2s',
    estimate: (body) => estimateFor(body.durationMs),
    call: translate,
  });

  const handleUpload: RouteHandlerMethod = async function (request, reply) {
    await admitUpload(deps, request, minimumMicros);
    const spooled: SpooledFile[] = [];
    try {
      spooledBy.set(request, await readTranslationForm(request, deps, spooled));
      return await handleMeteredCall.call(this, request, reply);
    } finally {
      // The call is over, or (s2s) its stream has started, by which time the upstream session has
      // opened the file: removing the name leaves the open descriptor readable to the end (POSIX).
      await Promise.all(spooled.map((file) => rm(file.path, { force: true })));
    }
  };

  app.post('/v1/audio/translations', { schema: TranslationsSchema, ...serializedAsBuilt, onSend: endUnreadUpload, handler: handleUpload });
};
