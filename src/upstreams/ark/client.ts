// ARK video generation tasks (volcengine-formats section 2): create, query, cancel.
import { bearer, isJsonObject, requestJson } from '../http-json.js';
import { MalformedAnswerError } from '../malformed.js';
import type { Upstream } from '../pool.js';

export const ARK_TASKS_PATH = '/api/v3/contents/generations/tasks';

/** The upstream's own task record (section 2.3), as the ARK-compatible GET returns it. */
export interface ArkTaskRecord {
  id: string;
  model?: string;
  status: 'queued' | 'running' | 'cancelled' | 'succeeded' | 'failed' | 'expired' | string;
  error?: { code?: string; message?: string } | null;
  created_at?: number;
  updated_at?: number;
  content?: { video_url?: string; last_frame_url?: string };
  duration?: number;
  usage?: { completion_tokens?: number; total_tokens?: number };
  [field: string]: unknown;
}

export async function createArkTask(upstream: Upstream, body: unknown, signal: AbortSignal): Promise<{ id: string }> {
  const { body: created } = await requestJson<{ id: unknown }>(upstream, { method: 'POST', path: ARK_TASKS_PATH, body, headers: bearer(upstream), signal });
  if (typeof created?.id !== 'string') throw new MalformedAnswerError('ARK answered a create without a task id');
  return { id: created.id };
}

export async function getArkTask(upstream: Upstream, id: string, signal: AbortSignal): Promise<ArkTaskRecord> {
  const { body } = await requestJson(upstream, { method: 'GET', path: `${ARK_TASKS_PATH}/${encodeURIComponent(id)}`, headers: bearer(upstream), signal });
  // Without a status the record says nothing about the task: not "failed", just no answer.
  if (!isJsonObject(body) || typeof body.status !== 'string') throw new MalformedAnswerError('ARK answered a task query without a status');
  return body as ArkTaskRecord;
}

export async function cancelArkTask(upstream: Upstream, id: string, signal: AbortSignal): Promise<void> {
  await requestJson(upstream, { method: 'DELETE', path: `${ARK_TASKS_PATH}/${encodeURIComponent(id)}`, headers: bearer(upstream), signal });
}
