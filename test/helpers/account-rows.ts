// Rows written straight into the store with the times and values a test chooses, for what the
// account API reads back: usage to filter, page and sum; tasks to list.
import type { Insertable } from 'kysely';
import type { TaskKind, TaskStatus, TasksTable, UsageTable } from '../../src/store/schema.js';

export function usageRow(
  accountId: string,
  {
    id,
    createdAt,
    model = 'sandbox-chat',
    endpoint = 'chat.completions',
    keyId = null,
    amountMicros = 10,
    units = { input_token: 1 },
    flags = null,
  }: {
    id: string;
    createdAt: number;
    model?: string;
    endpoint?: string;
    keyId?: string | null;
    amountMicros?: number;
    units?: Record<string, number>;
    flags?: string | null;
  },
): Insertable<UsageTable> {
  return {
    id,
    account_id: accountId,
    key_id: keyId,
    hold_id: null,
    request_id: `req_${id}`,
    model,
    endpoint,
    units: JSON.stringify(units),
    amount_micros: amountMicros,
    created_at: createdAt,
    unbilled_micros: 0,
    flags,
    client_request_id: null,
  };
}

export function taskRow(
  accountId: string,
  { id, createdAt, kind = 'video', status = 'succeeded' }: { id: string; createdAt: number; kind?: TaskKind; status?: TaskStatus },
): Insertable<TasksTable> {
  const finished = status === 'succeeded' || status === 'failed' || status === 'cancelled';
  return {
    id,
    account_id: accountId,
    key_id: null,
    request_id: `req_${id}`,
    kind,
    model: `sandbox-${kind}`,
    status,
    upstream_id: `up_${id}`,
    hold_id: null,
    request: '{}',
    result: null,
    error: status === 'failed' ? '{"code":"upstream_failed","message":"no"}' : null,
    upstream_record: null,
    callback_url: null,
    attempts: 0,
    // never due: the engine of a live gateway leaves these rows alone
    next_poll_at: Number.MAX_SAFE_INTEGER,
    lease_until: null,
    lease_owner: null,
    created_at: createdAt,
    updated_at: createdAt,
    finished_at: finished ? createdAt : null,
  };
}
