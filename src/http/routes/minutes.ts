// Meeting minutes (spec 4.3): funds frozen at submission, settled on the real duration (and the
// summary's tokens for service-minutes), refunded on failure.
import type { FastifyPluginAsync } from 'fastify';
import { invalidRequest } from '../../errors.js';
import { ownFileId } from '../../files/urls.js';
import { DEFAULT_DURATION_BUDGET, type MediaLength, readMediaLength } from '../../media/duration.js';
import { findFile } from '../../store/files.js';
import { MAX_MINUTES_SECONDS, MINUTES_MODELS, type MinutesRequest, normaliseMinutesRequest } from '../../tasks/minutes-request.js';
import { checkedFileUrl } from '../file-url.js';
import { MinutesCreateSchema, MinutesTaskSchema } from '../schemas/tasks.js';
import { serializedAsBuilt } from '../serialized-as-built.js';
import { type TaskRouteDeps, taskCreateHandler, taskReadHandler } from '../task-handler.js';
import { taskRecordView } from '../task-views.js';

// A recording whose header states its length is held for that (and a margin: the upstream's own
// measure may differ a little); one whose length cannot be read, for the spec's two hours.
const HOLD_MARGIN = { ratio: 1.1, seconds: 10 };
// A header can understate: never hold for less than the file's size takes to play at this rate
// (16 Mbit/s, above any audio and most recorded video), so a 1 GB file is held for 500 s at least.
const MAX_BYTES_PER_SECOND = 2_000_000;
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
        const fileUrl = await checkedFileUrl(deps, request.file_url);
        const length = await recordingLength(deps, fileUrl);
        if (length !== undefined && length.seconds > MAX_MINUTES_SECONDS) {
          throw invalidRequest(`file_url: the recording lasts ${Math.ceil(length.seconds)} s; minutes takes at most 2 hours (${MAX_MINUTES_SECONDS} s)`);
        }
        const fileSeconds = length && Math.max(length.seconds, (length.bytes ?? 0) / MAX_BYTES_PER_SECOND);
        return { ...request, file_url: fileUrl, ...(fileSeconds !== undefined && { file_seconds: fileSeconds }) };
      },
      modelOf: (request) => request.model,
      callbackUrlOf: (request) => request.callback_url,
      estimate: (request) => {
        const seconds = heldSeconds(request.file_seconds);
        return request.model === 'service-minutes'
          ? {
              second: seconds,
              input_token: seconds * SUMMARY_TOKENS_PER_SECOND.input,
              output_token: Math.ceil(seconds * SUMMARY_TOKENS_PER_SECOND.output),
            }
          : { second: seconds };
      },
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

function heldSeconds(fileSeconds: number | undefined): number {
  if (fileSeconds === undefined) return MAX_MINUTES_SECONDS;
  return Math.min(MAX_MINUTES_SECONDS, Math.ceil(fileSeconds * HOLD_MARGIN.ratio) + HOLD_MARGIN.seconds);
}

/** The recording's length from its header: an upload of this gateway from its disk, any other URL by its head. */
async function recordingLength(deps: TaskRouteDeps, fileUrl: string): Promise<MediaLength | undefined> {
  const budget = { ...DEFAULT_DURATION_BUDGET, allowPrivate: deps.allowPrivateUrls };
  const ownId = ownFileId(new URL(fileUrl), deps.publicUrl);
  if (ownId === undefined) return readMediaLength({ url: fileUrl }, budget);
  const file = await findFile(deps.store.db, { id: ownId, now: Date.now() });
  return file ? readMediaLength({ path: file.storage_path }, budget) : undefined;
}
