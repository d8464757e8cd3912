// How task records look to callers (DESIGN section 5): one shape for video, erase and minutes.
import type { TaskRow } from '../store/tasks.js';

const iso = (ms: number) => new Date(ms).toISOString();

/** Before the upstream has the task it is simply queued; erase and minutes call every live state `processing` (spec 2.2, 2.4). */
export function publicStatus(task: Pick<TaskRow, 'status'>, { liveAs }: { liveAs?: 'processing' } = {}): string {
  if (task.status === 'submitting' || task.status === 'queued' || task.status === 'processing')
    return liveAs ?? (task.status === 'submitting' ? 'queued' : task.status);
  return task.status;
}

export function taskRecordView(task: TaskRow, options: { liveAs?: 'processing'; resultView?: (result: unknown) => unknown } = {}) {
  const result = task.result ? JSON.parse(task.result) : undefined;
  return {
    id: task.id,
    ...(task.upstream_id && { upstream_id: task.upstream_id }),
    ...(task.request_id && { request_id: task.request_id }),
    model: task.model,
    status: publicStatus(task, options),
    created_at: iso(task.created_at),
    updated_at: iso(task.updated_at),
    ...(task.finished_at && { finished_at: iso(task.finished_at) }),
    ...(result !== undefined && { result: options.resultView ? options.resultView(result) : result }),
    ...(task.error && { error: JSON.parse(task.error) as { code: string; message: string } }),
  };
}

/** The creation answer: the record's first fields only. */
export function taskCreatedView(task: TaskRow, options: { liveAs?: 'processing' } = {}) {
  return {
    id: task.id,
    ...(task.upstream_id && { upstream_id: task.upstream_id }),
    model: task.model,
    status: publicStatus(task, options),
    created_at: iso(task.created_at),
  };
}
