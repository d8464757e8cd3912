// Subtitle erase. The upstream shape is the AI MediaKit task style (volcengine-formats 6.1 marks
// a subtitle-erase tool there as unconfirmed), so its paths live here, in one place.
import { bearer, isJsonObject, requestJson } from '../http-json.js';
import { MalformedAnswerError } from '../malformed.js';
import type { Upstream } from '../pool.js';

export const ERASE_PATHS = { submit: '/api/v1/tools/erase-subtitle', task: (id: string) => `/api/v1/tasks/${encodeURIComponent(id)}` };

export interface EraseTaskRecord {
  task_id: string;
  status: 'running' | 'completed' | 'failed' | string;
  result?: { video_url?: string; duration?: number };
  error?: { code?: string; message?: string };
  [field: string]: unknown;
}

export async function submitErase(upstream: Upstream, args: { videoUrl: string; clientToken: string; signal: AbortSignal }): Promise<{ taskId: string }> {
  const { body } = await requestJson<{ task_id: unknown }>(upstream, {
    method: 'POST',
    path: ERASE_PATHS.submit,
    headers: bearer(upstream),
    signal: args.signal,
    // client_token makes a retried submit return the same upstream task.
    body: { video_url: args.videoUrl, client_token: args.clientToken },
  });
  if (typeof body?.task_id !== 'string') throw new MalformedAnswerError('the erase upstream answered without a task id');
  return { taskId: body.task_id };
}

export async function getErase(upstream: Upstream, taskId: string, signal: AbortSignal): Promise<EraseTaskRecord> {
  const { body } = await requestJson(upstream, { method: 'GET', path: ERASE_PATHS.task(taskId), headers: bearer(upstream), signal });
  // Without a status the record says nothing about the task: not "failed", just no answer.
  if (!isJsonObject(body) || typeof body.status !== 'string') throw new MalformedAnswerError('the erase upstream answered a task query without a status');
  return body as EraseTaskRecord;
}
