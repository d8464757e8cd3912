// Subtitle erase on a video the account generated here. Billed per second of video (free during
// the promotion, still recorded); the clean video joins the asset library beside the original.
import { type EraseTaskRecord, getErase, submitErase } from '../../upstreams/erase/client.js';
import { UpstreamHttpError } from '../../upstreams/http.js';
import type { TaskKindHandler } from '../types.js';

export interface EraseTaskRequest {
  video_task_id: string;
  callback_url?: string;
  /** Filled in by the route from the source video task. */
  source_task_id: string;
  source_video_url: string;
  source_duration_seconds: number;
}

export function eraseHandler(): TaskKindHandler {
  return {
    kind: 'erase',
    webhookType: 'erase_subtitle',
    // Spec 4.5: every erase call produces a consumption record of zero amount, a failed one too.
    failedUseUnits: { second: 0 },
    async submit(task, model, signal) {
      const request = JSON.parse(task.request) as EraseTaskRequest;
      // Our task id as the client token: a retried submit finds the same upstream task.
      const { taskId } = await submitErase(model.upstream, { videoUrl: request.source_video_url, clientToken: task.id, signal });
      return { upstreamId: taskId };
    },
    async poll(task, model, { signal }) {
      const request = JSON.parse(task.request) as EraseTaskRequest;
      let record: EraseTaskRecord;
      try {
        record = await getErase(model.upstream, task.upstream_id!, signal);
      } catch (error) {
        // A task the upstream no longer knows (404 TaskNotFound) is over, as on video; anything else is retried.
        if (error instanceof UpstreamHttpError && error.statusCode === 404) {
          return { state: 'failed', error: { code: 'upstream_task_missing', message: 'the upstream no longer knows this task' } };
        }
        throw error;
      }
      if (record.status === 'running') return { state: 'running', status: 'processing', upstreamRecord: record };
      if (record.status === 'completed' && record.result?.video_url) {
        // The video's own length, as generated (and billed) here; the upstream's figure only as a fallback.
        const duration = request.source_duration_seconds > 0 ? request.source_duration_seconds : (record.result.duration ?? 0);
        return {
          state: 'succeeded',
          result: {
            video_url: record.result.video_url,
            original_video_url: request.source_video_url,
            source_task_id: request.source_task_id,
            duration_seconds: duration,
          },
          units: { second: duration },
          upstreamRecord: record,
          assets: [{ kind: 'video', url: record.result.video_url, sourceTaskId: request.source_task_id }],
          webhook: { video_url: record.result.video_url },
        };
      }
      return {
        state: 'failed',
        error: { code: record.error?.code ?? 'upstream_error', message: record.error?.message ?? `the upstream task ended as ${record.status}` },
        upstreamRecord: record,
      };
    },
  };
}
