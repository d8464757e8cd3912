// Video generation on ARK: the upstream creates and runs the task; the engine polls it and
// settles on the video's real length.
import { type ArkTaskRecord, createArkTask, getArkTask } from '../../upstreams/ark/client.js';
import { UpstreamHttpError } from '../../upstreams/http.js';
import type { PollOutcome, TaskKindHandler } from '../types.js';
import { type VideoRequest, videoUpstreamBody } from '../video-request.js';

const seconds = (ms: number) => Math.floor(ms / 1000);

/** What the GET of the gateway path shows as `result`. */
export interface VideoResult {
  video_url: string;
  last_frame_url?: string;
  duration_seconds: number;
}

function outcomeOf(record: ArkTaskRecord, request: VideoRequest): PollOutcome {
  // A caller of the ARK-compatible path only ever saw the upstream id: its callback carries that one.
  const callbackId = request.created_via === 'ark' && record.id ? { task_id: record.id } : {};
  switch (record.status) {
    case 'queued':
      return { state: 'running', status: 'queued', upstreamRecord: record };
    case 'running':
      return { state: 'running', status: 'processing', upstreamRecord: record };
    case 'succeeded': {
      const videoUrl = record.content?.video_url;
      if (!videoUrl)
        return { state: 'failed', error: { code: 'upstream_error', message: 'the upstream reported success without a video' }, upstreamRecord: record };
      // Billed on the real length; the requested one only when the upstream does not say.
      const duration = typeof record.duration === 'number' && record.duration > 0 ? record.duration : Math.max(request.duration, 1);
      const result: VideoResult = {
        video_url: videoUrl,
        duration_seconds: duration,
        ...(record.content?.last_frame_url && { last_frame_url: record.content.last_frame_url }),
      };
      return {
        state: 'succeeded',
        result,
        units: { second: duration },
        upstreamRecord: record,
        assets: [{ kind: 'video', url: videoUrl }],
        webhook: { ...callbackId, video_url: videoUrl },
      };
    }
    default: {
      // failed, expired, cancelled upstream, or a status we do not know: a terminal failure, refunded.
      const message = record.error?.message ?? `the upstream task ended as ${record.status}`;
      return { state: 'failed', error: { code: record.error?.code ?? `upstream_${record.status}`, message }, upstreamRecord: record, webhook: callbackId };
    }
  }
}

export function videoHandler(): TaskKindHandler {
  return {
    kind: 'video',
    webhookType: 'video',
    async submit(task, model, signal) {
      const request = JSON.parse(task.request) as VideoRequest;
      const { id } = await createArkTask(model.upstream, videoUpstreamBody(request, model.upstreamModel), signal);
      // ARK answers a create with the id alone; the ARK-compatible response (spec 2.3) adds the rest.
      return { upstreamId: id, upstreamRecord: { id, model: model.id, status: 'queued', created_at: seconds(task.created_at) } };
    },
    async poll(task, model, { signal }) {
      try {
        return outcomeOf(await getArkTask(model.upstream, task.upstream_id!, signal), JSON.parse(task.request) as VideoRequest);
      } catch (error) {
        // A task the upstream no longer knows is over; anything else is retried.
        if (error instanceof UpstreamHttpError && error.statusCode === 404) {
          return { state: 'failed', error: { code: 'upstream_task_missing', message: 'the upstream no longer knows this task' } };
        }
        throw error;
      }
    },
  };
}
