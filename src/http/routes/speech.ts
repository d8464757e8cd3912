// Speech synthesis: the native line stream passed through, and the OpenAI-compatible audio answer.
// Both are billed per character of the text, settled on the upstream's last usage.text_words.
import { pipeline } from 'node:stream';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { invalidRequest, MESSAGES } from '../../errors.js';
import type { Pipeline } from '../../pipeline/metered-call.js';
import type { Store } from '../../store/open.js';
import { streamSpeech } from '../../upstreams/volc-speech/client.js';
import { AUDIO_FORMATS, type AudioFormat, linesToAudio, streamingWavHeader } from '../../upstreams/volc-speech/to-audio.js';
import { characterCount } from '../../upstreams/volc-speech/usage.js';
import { meteredHandler } from '../metered-handler.js';
import { OpenAiSpeechSchema, UnidirectionalSpeechSchema } from '../schemas/speech.js';
import { serializedAsBuilt } from '../serialized-as-built.js';

interface UnidirectionalBody {
  req_params: { text: string; speaker: string; [field: string]: unknown };
  [field: string]: unknown;
}

interface OpenAiSpeech {
  model: string;
  input: string;
  voice: string;
  response_format?: AudioFormat;
  speed?: number;
}

const SAMPLE_RATE = 24_000;

/** The query's model wins over the header (spec 4.1); neither is a 400. */
function speechModel(request: FastifyRequest): string {
  const fromQuery = (request.query as { model?: string }).model;
  const header = request.headers['x-api-resource-id'];
  const model = fromQuery || (Array.isArray(header) ? header[0] : header);
  // The spec's message, for a model named by neither the query nor the header.
  if (!model) throw invalidRequest(MESSAGES.modelRequired);
  return model;
}

export const speechRoutes: FastifyPluginAsync<{ pipeline: Pipeline; store: Store }> = async (app, deps) => {
  // (deps.pipeline is the metered call; `pipeline` above is node's stream joiner)
  app.post('/v1/audio/speech/unidirectional', {
    schema: UnidirectionalSpeechSchema,
    ...serializedAsBuilt,
    handler: meteredHandler<UnidirectionalBody>(deps, {
      endpoint: 'audio.speech.unidirectional',
      // The upstream's own server-error line (volcengine-formats 1.4).
      streamFailure: `${JSON.stringify({ code: 55_000_000, message: MESSAGES.upstream, data: null })}\n`,
      modelType: 'tts',
      modelOf: speechModel,
      streams: () => true,
      // Only the text is billed: context_texts (voice instructions) are free.
      estimate: (body) => ({ character: characterCount(body.req_params.text) }),
      async call({ body, estimate, model, signal }) {
        const { body: stream, meter } = await streamSpeech(model.upstream, { body, signal, estimatedCharacters: estimate.character ?? 0 });
        return { kind: 'stream', contentType: 'application/json', body: stream, meter };
      },
    }),
  });

  app.post('/v1/audio/speech', {
    schema: OpenAiSpeechSchema,
    ...serializedAsBuilt,
    handler: meteredHandler<OpenAiSpeech>(deps, {
      endpoint: 'audio.speech',
      modelType: 'tts',
      streams: () => true,
      estimate: (body) => ({ character: characterCount(body.input) }),
      async call({ body, model, estimate, signal }) {
        const format = AUDIO_FORMATS[body.response_format ?? 'mp3'];
        const speechRate = body.speed === undefined ? 0 : Math.round((body.speed - 1) * 100);
        const native = {
          user: { uid: 'tollroute' },
          req_params: {
            text: body.input,
            speaker: body.voice,
            audio_params: { format: format.upstream, sample_rate: SAMPLE_RATE, ...(speechRate !== 0 && { speech_rate: Math.max(-50, speechRate) }) },
          },
        };
        const { body: lines, meter } = await streamSpeech(model.upstream, { body: native, signal, estimatedCharacters: estimate.character ?? 0 });
        const audio = linesToAudio(body.response_format === 'wav' ? streamingWavHeader(SAMPLE_RATE) : undefined);
        pipeline(lines, audio, () => {}); // either side failing or closing ends the other
        return { kind: 'stream', contentType: format.contentType, body: audio, meter };
      },
    }),
  });
};
