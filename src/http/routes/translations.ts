// POST /v1/audio/translations: a whole WAV in (multipart), translated text (s2t) or translated
// speech streamed as Ogg (s2s) out. Billed on the upstream's token usage; the hold is sized from
// the audio's duration. The file is checked before anything is held.
import { createHash } from 'node:crypto';
import { PassThrough } from 'node:stream';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { Units } from '../../billing/prices.js';
import { invalidRequest, MESSAGES } from '../../errors.js';
import type { Pipeline } from '../../pipeline/metered-call.js';
import type { CallArgs, MeteredAnswer, StreamMeter } from '../../pipeline/types.js';
import type { Store } from '../../store/open.js';
import { translateSpeech } from '../../upstreams/volc-ast/client.js';
import { checkTranslationWav, inspectWav } from '../../upstreams/volc-ast/wav.js';
import { meteredHandler } from '../metered-handler.js';

interface TranslationRequest {
  model: string | undefined;
  mode: 's2t' | 's2s';
  sourceLanguage?: string;
  targetLanguage?: string;
  voice?: string;
  pcm: Buffer;
  durationMs: number;
  fileDigest: string;
}

// Hold estimate only (settlement uses the upstream's count): speech runs near 25 tokens a second
// in, and a translation rarely says more than 10 tokens a second back.
const INPUT_TOKENS_PER_SECOND = 25;
const OUTPUT_TOKENS_PER_SECOND = 10;
const TEXT_FIELDS = ['model', 'mode', 'source_language', 'target_language', 'voice'] as const;

async function readTranslationForm(request: FastifyRequest): Promise<TranslationRequest> {
  if (!request.isMultipart()) throw invalidRequest('expected multipart/form-data with a file field');
  const fields: Partial<Record<(typeof TEXT_FIELDS)[number], string>> = {};
  let file: Buffer | undefined;
  for await (const part of request.parts()) {
    if (part.type === 'file') {
      if (part.fieldname !== 'file') throw invalidRequest(`${part.fieldname}: unexpected file field; send the audio as file`);
      file = await part.toBuffer(); // bounded by limits.upload_limit_bytes (413 past it)
    } else if ((TEXT_FIELDS as readonly string[]).includes(part.fieldname)) {
      fields[part.fieldname as (typeof TEXT_FIELDS)[number]] = String(part.value);
    } else {
      throw invalidRequest(`${part.fieldname}: unknown field`);
    }
  }
  if (!fields.model) throw invalidRequest(MESSAGES.modelRequired);
  if (!file) throw invalidRequest('file field is required');
  const mode = fields.mode ?? 's2t';
  if (mode !== 's2t' && mode !== 's2s') throw invalidRequest('mode: must be one of "s2t", "s2s"');
  const problem = checkTranslationWav(file);
  if (problem) throw invalidRequest(problem);
  const wav = inspectWav(file);
  if (!wav.ok) throw invalidRequest(wav.problem);
  return {
    model: fields.model,
    mode,
    sourceLanguage: fields.source_language || undefined,
    targetLanguage: fields.target_language || undefined,
    voice: fields.voice || undefined,
    pcm: file.subarray(wav.dataOffset, wav.dataOffset + wav.dataLength),
    durationMs: wav.durationMs,
    fileDigest: createHash('sha256').update(file).digest('hex'),
  };
}

async function translate({ body, model, estimate, signal }: CallArgs<TranslationRequest>): Promise<MeteredAnswer> {
  const { channel } = model.upstream;
  const common = {
    baseUrl: channel.base_url, appId: channel.app_id, accessKey: channel.api_key, resourceId: channel.resource_id,
    sourceLanguage: body.sourceLanguage, targetLanguage: body.targetLanguage, voice: body.voice, pcm: body.pcm, signal,
  };
  if (body.mode === 's2t') {
    const result = await translateSpeech({ ...common, mode: 's2t' });
    return { kind: 'json', body: { text: result.text, source_text: result.sourceText }, units: result.usage ?? estimate };
  }
  const audio = new PassThrough();
  const meter = new TranslationMeter(estimate);
  translateSpeech({ ...common, mode: 's2s', onAudio: (chunk) => audio.write(chunk) }).then(
    (result) => {
      meter.finish(result.usage);
      audio.end();
    },
    (error: Error) => audio.destroy(error),
  );
  return { kind: 'stream', contentType: 'audio/ogg', body: audio, meter };
}

/** The session's usage comes with its end; until then there is nothing of its own to count. */
class TranslationMeter implements StreamMeter {
  failed = false;
  completed = false;
  private usage: Units | undefined;
  constructor(private readonly estimate: Units) {}
  finish(usage: Units | undefined) {
    this.usage = usage;
    this.completed = true;
  }
  reported() {
    return this.completed ? (this.usage ?? this.estimate) : undefined;
  }
  delivered() {
    return {};
  }
}

export const translationRoutes: FastifyPluginAsync<{ pipeline: Pipeline; store: Store }> = async (app, deps) => {
  app.post('/v1/audio/translations', {
    handler: meteredHandler<TranslationRequest>(deps, {
      endpoint: 'audio.translations',
      modelType: 'ast',
      readBody: readTranslationForm,
      // The file's digest, not its bytes, identifies a request for Idempotency-Key.
      fingerprint: ({ pcm: _pcm, ...rest }) => rest,
      streams: (body) => body.mode === 's2s',
      // Usage comes only when the session ends: a caller that leaves pays the estimate (DESIGN §5).
      billsEstimateWhenLeft: true,
      estimate: (body) => {
        const seconds = Math.max(1, Math.ceil(body.durationMs / 1000));
        return { input_token: seconds * INPUT_TOKENS_PER_SECOND, output_token: seconds * OUTPUT_TOKENS_PER_SECOND };
      },
      call: translate,
    }),
  });
};
