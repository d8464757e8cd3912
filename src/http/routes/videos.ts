// Video generation: the gateway path (`/v1/videos/generations`, our task wrapping upstream_id) and
// the ARK-compatible path (`…/contents/generations/tasks`, the upstream's own shape, id = upstream
// id) — one body, one billing, one routing. DELETE cancels a queued task on the ARK path.

import type { FastifyPluginAsync } from 'fastify';
import { releaseHoldIn } from '../../billing/ledger.js';
import { invalidRequest } from '../../errors.js';
import { onTaskChannel } from '../../routing/task-channel.js';
import { finishTask, type TaskRow } from '../../store/tasks.js';
import { normaliseVideoRequest, type VideoRequest, videoHoldSeconds } from '../../tasks/video-request.js';
import { cancelArkTask, getArkTask } from '../../upstreams/ark/client.js';
import { UpstreamHttpError } from '../../upstreams/http.js';
import { ArkCancelSchema, ArkCreateSchema, ArkTaskSchema, VideoCreateSchema, VideoTaskSchema } from '../schemas/tasks.js';
import { serializedAsBuilt } from '../serialized-as-built.js';
import { callerTask, type TaskCreateSpec, type TaskRouteDeps, taskCreateHandler, taskReadHandler } from '../task-handler.js';
import { taskCreatedView, taskRecordView } from '../task-views.js';

const ARK_PREFIXES = ['/api/v3', '/v3', '/api/v1', '/v1'];
const iso = (ms: number) => new Date(ms).toISOString();

/** The ARK-compatible record: the upstream's last answer, with our view of the state and the public model id. */
function arkRecordView(task: TaskRow) {
  const record = task.upstream_record ? (JSON.parse(task.upstream_record) as Record<string, unknown>) : {};
  const status = task.status === 'submitting' ? 'queued' : task.status === 'processing' ? 'running' : task.status;
  return {
    ...record,
    id: task.upstream_id,
    model: task.model,
    status,
    // As the creation answer gives them (spec 2.3: a string), not the upstream's Unix seconds.
    created_at: iso(task.created_at),
    updated_at: iso(task.updated_at),
  };
}

function createSpec(view: (task: TaskRow) => unknown, createdVia: 'gateway' | 'ark'): TaskCreateSpec<VideoRequest> {
  return {
    kind: 'video',
    // Remembered so the callback names the task by the id this caller was given.
    normalise: (body) => ({ ...normaliseVideoRequest(body), ...(createdVia === 'ark' && { created_via: 'ark' as const }) }),
    modelOf: (request) => request.model,
    callbackUrlOf: (request) => request.callback_url,
    // -1 leaves the length to the model: hold for the longest it makes.
    estimate: (request, model) => ({ second: videoHoldSeconds(request, model.config.max_video_seconds) }),
    view,
  };
}

export const videoRoutes: FastifyPluginAsync<TaskRouteDeps> = async (app, deps) => {
  app.post('/v1/videos/generations', {
    schema: VideoCreateSchema,
    ...serializedAsBuilt,
    handler: taskCreateHandler(
      deps,
      createSpec((task) => taskCreatedView(task), 'gateway'),
    ),
  });
  app.get('/v1/videos/generations/:taskId', {
    schema: VideoTaskSchema,
    ...serializedAsBuilt,
    handler: taskReadHandler(deps, { kind: 'video', view: (task) => taskRecordView(task) }),
  });

  for (const prefix of ARK_PREFIXES) {
    const path = `${prefix}/contents/generations/tasks`;
    app.post(path, {
      schema: ArkCreateSchema,
      ...serializedAsBuilt,
      handler: taskCreateHandler(
        deps,
        createSpec((task) => ({ id: task.upstream_id, model: task.model, status: 'queued', created_at: iso(task.created_at) }), 'ark'),
      ),
    });
    app.get(`${path}/:taskId`, { schema: ArkTaskSchema, ...serializedAsBuilt, handler: taskReadHandler(deps, { kind: 'video', view: arkRecordView }) });
    app.delete(`${path}/:taskId`, { schema: ArkCancelSchema, ...serializedAsBuilt }, async (request) => {
      const task = await callerTask(deps, request, 'video');
      if (task.status !== 'queued' || !task.upstream_id)
        throw invalidRequest(`only a queued task can be cancelled; this one is ${task.status === 'submitting' ? 'queued' : task.status}`);
      const model = onTaskChannel(deps.pipeline.catalogueFor(task.livemode !== 0).resolve(task.model, 'video'), task);
      // Our status may lag the upstream's: ask first. On a finished task ARK's DELETE would delete
      // the record and answer 2xx, and we would refund a video that was made.
      const upstreamRecord = await getArkTask(model.upstream, task.upstream_id, AbortSignal.timeout(30_000));
      if (upstreamRecord.status !== 'queued') throw invalidRequest('only a queued task can be cancelled; this one has started');
      try {
        await cancelArkTask(model.upstream, task.upstream_id, AbortSignal.timeout(30_000));
      } catch (error) {
        // The upstream started it meanwhile: a running task cannot be stopped, so it is billed.
        if (error instanceof UpstreamHttpError && error.statusCode < 500) throw invalidRequest('only a queued task can be cancelled; this one has started');
        throw error;
      }
      await deps.store.db.transaction().execute(async (trx) => {
        const cancelled = await finishTask(trx, { id: task.id, status: 'cancelled', now: Date.now() });
        if (cancelled?.hold_id) await releaseHoldIn(trx, cancelled.hold_id, { note: `task ${task.id} cancelled` });
      });
      return {};
    });
  }
};
