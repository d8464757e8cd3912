// POST /v1/audio/transcriptions: OpenAI's audio transcriptions. A multipart upload of one recording
// (flac, m4a, mp3, mp4, mpeg, mpga, ogg, wav, webm; 25 MB at most) to its text, in one piece (json,
// text, srt, verbose_json, vtt) or streamed as SSE. Billed per second of audio: held from the
// length the file's header states, settled on the upstream's usage. Before a byte of the body is
// read: the key, a Content-Length within the limit, the rate limit and a balance that covers one
// second; the file is streamed to disk under the limit, checked there, and sent from disk.
import { rm } from 'node:fs/promises';
import type { FastifyPluginAsync, FastifyRequest, RouteHandlerMethod } from 'fastify';
import { requireBalanceFor } from '../../billing/upload-minimum.js';
import type { ModelConfig } from '../../config/schema.js';
import { invalidRequest, MESSAGES } from '../../errors.js';
import { JsonText } from '../../json-text.js';
import { holdFor, type Pipeline } from '../../pipeline/metered-call.js';
import type { CallArgs, MeteredAnswer } from '../../pipeline/types.js';
import type { Store } from '../../store/open.js';
import { transcribe } from '../../upstreams/openai-transcriptions/client.js';
import { isJsonFormat, transcriptionEstimate } from '../../upstreams/openai-transcriptions/usage.js';
import { requireCaller } from '../auth.js';
import { meteredHandler } from '../metered-handler.js';
import { TranscriptionsSchema } from '../schemas/transcriptions.js';
import { serializedAsBuilt } from '../serialized-as-built.js';
import { readTranscriptionForm, type TranscriptionForm } from '../transcription-form.js';
import { admitUpload, endUnreadUpload, type SpooledFile, tooLarge } from '../uploads.js';

interface TranscriptionDeps {
  pipeline: Pipeline;
  store: Store;
  dataDir: string;
  uploadLimitBytes: number;
}

/** OpenAI's limit on a transcription's file. */
export const TRANSCRIPTION_FILE_LIMIT_BYTES = 25 * 1024 * 1024;
/** Room in a request's Content-Length for the form's framing and its text fields, beside the file. */
export const FORM_ALLOWANCE_BYTES = 64 * 1024;

// The protocol's error event, as OpenAI's SDKs read one: a data event with an `error` object.
const STREAM_FAILURE = `data: ${JSON.stringify({ type: 'error', error: { message: MESSAGES.upstream, type: 'server_error', param: null, code: null } })}\n\n`;

// No recording holds less than one second's worth (the estimate rounds up to a whole second).
const oneSecondHold = (model: ModelConfig) => holdFor(model, transcriptionEstimate(1, 0, model));

async function transcribeUpload({ body, model, estimate, signal }: CallArgs<TranscriptionForm>): Promise<MeteredAnswer> {
  const answer = await transcribe(model.upstream, {
    request: body.request,
    audio: body.audio,
    upstreamModel: model.upstreamModel,
    model: model.config,
    estimate,
    signal,
  });
  if (answer.kind === 'stream') return { kind: 'stream', contentType: 'text/event-stream', body: answer.body, meter: answer.meter };
  // Text, srt and vtt go out as the upstream wrote them, as text/plain.
  return { kind: 'json', body: answer.kind === 'json' ? new JsonText(answer.text) : answer.text, units: answer.units };
}

export const transcriptionRoutes: FastifyPluginAsync<TranscriptionDeps> = async (app, deps) => {
  const fileLimitBytes = Math.min(TRANSCRIPTION_FILE_LIMIT_BYTES, deps.uploadLimitBytes);
  // Before any part is read the model is unknown: the cheapest transcription model's second is the
  // least any upload here can cost. A model named before the file raises it to that model's.
  const cheapestHold = Math.min(...deps.pipeline.catalogue.list('transcription').map((model) => oneSecondHold(model.config)));
  const minimumMicros = Number.isFinite(cheapestHold) ? cheapestHold : 0;
  const formOf = new WeakMap<FastifyRequest, TranscriptionForm>();

  const handleMeteredCall = meteredHandler<TranscriptionForm>(deps, {
    endpoint: 'audio.transcriptions',
    modelType: 'transcription',
    // Already read (and admitted) by the handler below, before the pipeline runs.
    admitsBeforeBody: true,
    readBody: async (request) => formOf.get(request)!,
    // The file's digest, not where it was kept, identifies a request for Idempotency-Key.
    fingerprint: ({ audio: _audio, ...rest }) => rest,
    streams: (body) => body.request.stream,
    streamFailure: STREAM_FAILURE,
    estimate: (body, model) => transcriptionEstimate(body.durationSeconds, Buffer.byteLength(body.request.prompt ?? ''), model.config),
    call: transcribeUpload,
  });

  const admitModel = async (request: FastifyRequest, modelId: string) => {
    const caller = requireCaller(request);
    const model = deps.pipeline.catalogueFor(caller.livemode).resolve(modelId, 'transcription');
    await requireBalanceFor(deps.store, { accountId: caller.accountId, minimumMicros: oneSecondHold(model.config) });
  };

  const handleUpload: RouteHandlerMethod = async function (request, reply) {
    // A body announced past the limit is refused before anything else, and never read.
    const declared = Number(request.headers['content-length']);
    if (declared > fileLimitBytes + FORM_ALLOWANCE_BYTES) {
      throw tooLarge(`file: larger than the transcription upload limit of ${fileLimitBytes} bytes (the request's Content-Length is ${declared})`);
    }
    await admitUpload(deps, request, minimumMicros);
    const spooled: SpooledFile[] = [];
    try {
      const form = await readTranscriptionForm(request, { dataDir: deps.dataDir, fileLimitBytes, admitModel: (model) => admitModel(request, model) }, spooled);
      // A replay is stored and sent as JSON: a text answer would come back as a JSON string.
      if (!isJsonFormat(form.request.responseFormat) && !form.request.stream && request.headers['idempotency-key'] !== undefined) {
        throw invalidRequest('Idempotency-Key: supported with response_format "json" or "verbose_json" only');
      }
      formOf.set(request, form);
      return await handleMeteredCall.call(this, request, reply);
    } finally {
      // The call is over, or its stream has started, by which time the upstream has the whole file.
      await Promise.all(spooled.map((file) => rm(file.path, { force: true })));
    }
  };

  app.post('/v1/audio/transcriptions', { schema: TranscriptionsSchema, ...serializedAsBuilt, onSend: endUnreadUpload, handler: handleUpload });
};
