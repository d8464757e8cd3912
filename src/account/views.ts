// How an account sees its own keys, tasks, webhook deliveries, spend and usage export over the
// account API (/v1/account). Money in *_micros, instants as ISO 8601 in UTC.
import { iso, usageView } from '../admin/views.js';
import { publicStatus } from '../http/task-views.js';
import type { AccountKeyRow } from '../store/api-keys.js';
import type { KeySpend } from '../store/key-spend.js';
import type { TaskListRow } from '../store/tasks.js';
import { MS_PER_DAY, type SpendRow, type UsageRow } from '../store/usage.js';
import type { DeliveryRow } from '../store/webhook-outbox.js';
import { csvLine } from './csv.js';

const isoOrNull = (ms: number | null) => (ms === null ? null : iso(ms));

/**
 * Never the key itself nor its hash: the prefix is all the store keeps that a person can recognise.
 * `spend` is what a capped key has spent or holds this UTC day and month (store/key-spend.ts).
 */
export const keyView = (row: AccountKeyRow, spend: KeySpend | null = null) => ({
  id: row.id,
  prefix: row.prefix,
  name: row.name,
  rpm: row.rpm,
  allowed_models: row.allowed_models === null ? null : (JSON.parse(row.allowed_models) as string[]),
  daily_cap_micros: row.daily_cap_micros,
  monthly_cap_micros: row.monthly_cap_micros,
  expires_at: isoOrNull(row.expires_at),
  created_at: iso(row.created_at),
  last_used_at: isoOrNull(row.last_used_at),
  revoked_at: isoOrNull(row.revoked_at),
  spend: spend && { day_micros: spend.dayMicros, month_micros: spend.monthMicros },
});

/** One line per task of any kind; the kind's own GET has the whole record (result included). */
export const taskListView = (row: TaskListRow) => ({
  id: row.id,
  kind: row.kind,
  model: row.model,
  status: publicStatus(row),
  upstream_id: row.upstream_id,
  request_id: row.request_id,
  error: row.error === null ? null : (JSON.parse(row.error) as { code: string; message: string }),
  created_at: iso(row.created_at),
  updated_at: iso(row.updated_at),
  finished_at: isoOrNull(row.finished_at),
  livemode: row.livemode !== 0,
});

export const deliveryView = (row: DeliveryRow) => ({
  id: row.id,
  task_id: row.task_id,
  event_id: row.event_id,
  url: row.url,
  state: row.state,
  attempts: row.attempts,
  last_status: row.last_status,
  last_error: row.last_error,
  created_at: iso(row.created_at),
  // Only a pending delivery has a next attempt; the column keeps the last schedule after that.
  next_attempt_at: row.state === 'pending' ? iso(row.next_attempt_at) : null,
  delivered_at: isoOrNull(row.delivered_at),
});

/** A day number (days since 1970-01-01, UTC) as `YYYY-MM-DD`. */
export const utcDay = (day: number) => iso(day * MS_PER_DAY).slice(0, 10);

export const spendByDayView = (row: SpendRow<number>) => ({ day: utcDay(row.group), requests: row.requests, amount_micros: row.amountMicros });
export const spendByModelView = (row: SpendRow<string>) => ({ model: row.group, requests: row.requests, amount_micros: row.amountMicros });

// The usage export's columns: the JSON rows' fields, `units` and `prices` as their JSON text.
const USAGE_CSV_COLUMNS = [
  'id',
  'created_at',
  'model',
  'endpoint',
  'units',
  'prices',
  'amount_micros',
  'unbilled_micros',
  'flags',
  'key_id',
  'request_id',
  'client_request_id',
  'hold_id',
  'upstream_ms',
  'channel',
  'attempts',
  'livemode',
] as const satisfies readonly (keyof ReturnType<typeof usageView>)[];

export const USAGE_CSV_HEADER = csvLine(USAGE_CSV_COLUMNS);

export function usageCsvLine(row: UsageRow, livemode: boolean): string {
  const view = usageView(row, livemode);
  return csvLine(USAGE_CSV_COLUMNS.map((column) => view[column]));
}
