// Meeting minutes (spec 4.3): funds frozen at submission, settled on the real duration (and the
// summary's tokens for service-minutes), refunded on failure.
import type { FastifyPluginAsync } from 'fastify';
import { MINUTES_MODELS, type MinutesRequest, normaliseMinutesRequest } from '../../tasks/minutes-request.js';
import { checkedFileUrl } from '../file-url.js';
import { MinutesCreateSchema, MinutesTaskSchema } from '../schemas/tasks.js';
import { serializedAsBuilt } from '../serialized-as-built.js';
import { type TaskRouteDeps, taskCreateHandler, taskReadHandler } from '../task-handler.js';
import { taskRecordView } from '../task-views.js';

// The spec's limit on a recording: at most two hours. Held in full, settled on the real length.
const MAX_AUDIO_SECONDS = 2 * 60 * 60;
// A summary's prompt is the transcript: about 4 tokens a second of speech, and a tenth of that back.
const SUMMARY_TOKENS_PER_SECOND = { input: 4, output: 0.4 };

export const minutesRoutes: FastifyPluginAsync<TaskRouteDeps> = async (app, deps) => {
  app.post('/v1/audio/minutes', {
    schema: MinutesCreateSchema,
    ...serializedAsBuilt,
    handler: taskCreateHandler<MinutesRequest>(deps, {
      kind: 'minutes',
      normalise: async (body) => {
        // A model that is not one of the two is named as DESIGN 5 names any wrong model: unknown, or of another type.
        const model = (body as { model?: unknown } | null)?.model;
        if (typeof model === 'string' && model !== '' && !(MINUTES_MODELS as readonly string[]).includes(model))
          deps.pipeline.catalogue.resolve(model, 'minutes');
        const request = normaliseMinutesRequest(body);
        // The gateway's own uploads are fine wherever it runs: it serves them for the upstream to fetch.
        return { ...request, file_url: await checkedFileUrl(deps, request.file_url) };
      },
      modelOf: (request) => request.model,
      callbackUrlOf: (request) => request.callback_url,
      estimate: (request) =>
        request.model === 'service-minutes'
          ? {
              second: MAX_AUDIO_SECONDS,
              input_token: MAX_AUDIO_SECONDS * SUMMARY_TOKENS_PER_SECOND.input,
              output_token: Math.ceil(MAX_AUDIO_SECONDS * SUMMARY_TOKENS_PER_SECOND.output),
            }
          : { second: MAX_AUDIO_SECONDS },
      view: (task) => ({
        id: task.id,
        request_id: task.request_id,
        model: task.model,
        status: 'processing',
        created_at: new Date(task.created_at).toISOString(),
      }),
    }),
  });
  app.get('/v1/audio/minutes/:taskId', {
    schema: MinutesTaskSchema,
    ...serializedAsBuilt,
    handler: taskReadHandler(deps, { kind: 'minutes', view: (task) => taskRecordView(task, { liveAs: 'processing' }) }),
  });
};
