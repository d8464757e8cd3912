// Queries on `tasks`: asynchronous upstream work, claimed by background loops with leases.
import { type Insertable, type Kysely, type Selectable, sql } from 'kysely';
import type { Dialect } from './migrations.js';
import type { DB, TaskKind, TaskStatus, TasksTable } from './schema.js';

export type TaskRow = Selectable<TasksTable>;

const COLUMNS = [
  'id', 'account_id', 'key_id', 'request_id', 'kind', 'model', 'status', 'upstream_id', 'hold_id', 'request', 'result', 'error',
  'upstream_record', 'callback_url', 'attempts', 'next_poll_at', 'lease_until', 'lease_owner', 'created_at', 'updated_at',
  'finished_at',
] as const;

/** States the engine still works on; the rest are terminal. */
export const LIVE_STATUSES: TaskStatus[] = ['submitting', 'queued', 'processing'];

export async function insertTask(db: Kysely<DB>, row: Insertable<TasksTable>): Promise<void> {
  await db.insertInto('tasks').values(row).execute();
}

export async function findTask(db: Kysely<DB>, id: string): Promise<TaskRow | undefined> {
  return db.selectFrom('tasks').select(COLUMNS).where('id', '=', id).executeTakeFirst();
}

/** A task of this account by its own id or its upstream id: another account's is as good as absent. */
export async function findAccountTask(
  db: Kysely<DB>,
  { accountId, kind, id }: { accountId: string; kind: TaskKind; id: string },
): Promise<TaskRow | undefined> {
  return db
    .selectFrom('tasks')
    .select(COLUMNS)
    .where('account_id', '=', accountId)
    .where('kind', '=', kind)
    .where((eb) => eb.or([eb('id', '=', id), eb('upstream_id', '=', id)]))
    .executeTakeFirst();
}

/**
 * Leases up to `limit` live tasks that are due. On PostgreSQL the inner select skips rows another
 * instance is claiming right now (FOR UPDATE SKIP LOCKED), so no task is claimed twice; SQLite has
 * one writer, and the lease condition does the rest.
 */
export async function claimDueTasks(
  db: Kysely<DB>,
  { dialect, now, leaseMs, owner, limit }: { dialect: Dialect; now: number; leaseMs: number; owner: string; limit: number },
): Promise<TaskRow[]> {
  const due = db
    .selectFrom('tasks')
    .select('id')
    .where('status', 'in', LIVE_STATUSES)
    .where('next_poll_at', '<=', now)
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
    .orderBy('next_poll_at')
    .limit(limit);
  return db
    .updateTable('tasks')
    .set({ lease_until: now + leaseMs, lease_owner: owner })
    .where('id', 'in', dialect === 'postgres' ? due.modifyEnd(sql`for update skip locked`) : due)
    // Re-checked on the row itself: on SQLite nothing locked it between the select and the update.
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
    .returning(COLUMNS)
    .execute();
}

/** The upstream accepted the task: it now has an upstream id and waits to be polled. */
export async function markSubmitted(
  db: Kysely<DB>,
  { id, upstreamId, upstreamRecord, nextPollAt, now }: { id: string; upstreamId: string | null; upstreamRecord: string | null; nextPollAt: number; now: number },
): Promise<void> {
  await db
    .updateTable('tasks')
    .set({ status: 'queued', upstream_id: upstreamId, upstream_record: upstreamRecord, next_poll_at: nextPollAt, lease_until: null, lease_owner: null, updated_at: now })
    .where('id', '=', id)
    .where('status', '=', 'submitting')
    .execute();
}

/** A poll that found the task still running: new status, next poll time, lease given back. */
export async function recordPoll(
  db: Kysely<DB>,
  { id, owner, status, upstreamRecord, attempts, nextPollAt, now }: {
    id: string; owner: string; status: TaskStatus; upstreamRecord?: string; attempts: number; nextPollAt: number; now: number;
  },
): Promise<boolean> {
  const result = await db
    .updateTable('tasks')
    .set({
      status, attempts, next_poll_at: nextPollAt, lease_until: null, lease_owner: null, updated_at: now,
      ...(upstreamRecord !== undefined && { upstream_record: upstreamRecord }),
    })
    .where('id', '=', id)
    .where('lease_owner', '=', owner)
    .where('status', 'in', LIVE_STATUSES)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * The terminal transition, a compare-and-swap on "still live": only one caller ever wins it, and
 * only the winner settles or releases the hold and enqueues the webhook (in the same transaction).
 */
export async function finishTask(
  db: Kysely<DB>,
  { id, status, result, error, upstreamRecord, now }: {
    id: string; status: 'succeeded' | 'failed' | 'cancelled'; result?: string | null; error?: string | null; upstreamRecord?: string; now: number;
  },
): Promise<TaskRow | undefined> {
  return db
    .updateTable('tasks')
    .set({
      status, result: result ?? null, error: error ?? null, finished_at: now, updated_at: now, lease_until: null, lease_owner: null,
      ...(upstreamRecord !== undefined && { upstream_record: upstreamRecord }),
    })
    .where('id', '=', id)
    .where('status', 'in', LIVE_STATUSES)
    .returning(COLUMNS)
    .executeTakeFirst();
}
