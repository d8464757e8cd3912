// Async image generation: POST creates a task (answered at once), GET reads it. Generated images
// join the account's gallery (GET /v1/assets?kind=image).
import type { FastifyPluginAsync } from 'fastify';
import type { TaskRow } from '../../store/tasks.js';
import type { ImageTaskRequest } from '../../tasks/kinds/image.js';
import { imagesEstimate } from '../../upstreams/openai-images/units.js';
import { ImagesAsyncSchema, ImageTaskSchema } from '../schemas/tasks.js';
import { serializedAsBuilt } from '../serialized-as-built.js';
import { type TaskRouteDeps, taskCreateHandler, taskReadHandler } from '../task-handler.js';

const seconds = (ms: number) => Math.floor(ms / 1000);
const PUBLIC_STATUS: Record<string, string> = {
  submitting: 'queued',
  queued: 'queued',
  processing: 'processing',
  succeeded: 'succeeded',
  failed: 'failed',
  cancelled: 'failed',
};

/** Spec 2.5: `error` is a string, `result` is the images answer, `created_at` an integer. */
export function imageTaskView(task: TaskRow) {
  const error = task.error ? (JSON.parse(task.error) as { message: string }).message : undefined;
  return {
    id: task.id,
    status: PUBLIC_STATUS[task.status] ?? task.status,
    model: task.model,
    created_at: seconds(task.created_at),
    ...(task.status === 'failed' && { error }),
    ...(task.status === 'succeeded' && task.result && { result: JSON.parse(task.result) }),
  };
}

type ImagesAsyncRequest = ImageTaskRequest & { callback_url?: string };

export const imageRoutes: FastifyPluginAsync<TaskRouteDeps> = async (app, deps) => {
  app.post('/v1/images/async', {
    schema: ImagesAsyncSchema,
    ...serializedAsBuilt,
    handler: taskCreateHandler<ImagesAsyncRequest>(deps, {
      kind: 'image',
      normalise: (body) => body as ImagesAsyncRequest,
      modelOf: (request) => request.model,
      callbackUrlOf: (request) => request.callback_url,
      // Per image, and per token for per-token models (units.ts).
      estimate: (request, model) => imagesEstimate(request, model.config),
      view: (task) => ({ id: task.id, status: 'queued', model: task.model, created_at: seconds(task.created_at) }),
    }),
  });

  app.get('/v1/images/async/:taskId', {
    schema: ImageTaskSchema,
    ...serializedAsBuilt,
    handler: taskReadHandler(deps, { kind: 'image', view: imageTaskView }),
  });
};
