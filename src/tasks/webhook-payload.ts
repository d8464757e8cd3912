// The payload of a terminal-state callback (spec 6.1; DESIGN section 5 extends it to every kind).
import type { TaskRow } from '../store/tasks.js';
import type { TaskError } from './types.js';

const iso = (ms: number) => new Date(ms).toISOString();

export function webhookPayload(
  task: TaskRow,
  {
    eventId,
    webhookType,
    status,
    error,
    extra = {},
  }: { eventId: string; webhookType: string; status: 'succeeded' | 'failed' | 'cancelled'; error?: TaskError; extra?: Record<string, unknown> },
): Record<string, unknown> {
  return {
    task_id: task.id,
    // The X-Service-Event-Id header's value, in the signed body: a receiver that deduplicates on it
    // relies on a value the signature covers (verifyWebhook refuses a header that differs).
    event_id: eventId,
    task_type: webhookType,
    status,
    model: task.model,
    // false for a test key's task (docs/api.md "Test mode"), so one receiver can tell test events apart.
    livemode: task.livemode !== 0,
    ...extra,
    // The spec names one failure code for callbacks; the upstream's own reason goes in the message.
    ...(error && { error: { code: 'task_failed', message: error.message } }),
    created_at: iso(task.created_at),
    finished_at: iso(task.finished_at ?? Date.now()),
  };
}
