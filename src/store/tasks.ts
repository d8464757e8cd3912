// Queries on `tasks`: asynchronous upstream work, claimed by background loops with leases.
import { type Insertable, type Kysely, type Selectable, sql } from 'kysely';
import { olderThan, type Position } from './keyset.js';
import type { Dialect } from './migrations.js';
import type { DB, TaskKind, TaskStatus, TasksTable } from './schema.js';

export type TaskRow = Selectable<TasksTable>;

const COLUMNS = [
  'id',
  'account_id',
  'key_id',
  'request_id',
  'kind',
  'model',
  'status',
  'upstream_id',
  'hold_id',
  'request',
  'result',
  'error',
  'upstream_record',
  'callback_url',
  'attempts',
  'next_poll_at',
  'lease_until',
  'lease_owner',
  'created_at',
  'updated_at',
  'finished_at',
  'channel',
  'channel_key',
  'generation_attempts',
  'livemode',
  'prices',
] as const;

/** States the engine still works on; the rest are terminal. */
export const LIVE_STATUSES: TaskStatus[] = ['submitting', 'queued', 'processing'];

export async function insertTask(db: Kysely<DB>, row: Insertable<TasksTable>): Promise<void> {
  await db.insertInto('tasks').values(row).execute();
}

export async function findTask(db: Kysely<DB>, id: string): Promise<TaskRow | undefined> {
  return db.selectFrom('tasks').select(COLUMNS).where('id', '=', id).executeTakeFirst();
}

/**
 * A task of this account (of `kind`, if given) by its own id or its upstream id: another account's
 * is as good as absent.
 */
export async function findAccountTask(
  db: Kysely<DB>,
  { accountId, kind, id }: { accountId: string; kind?: TaskKind; id: string },
): Promise<TaskRow | undefined> {
  return db
    .selectFrom('tasks')
    .select(COLUMNS)
    .where('account_id', '=', accountId)
    .$if(kind !== undefined, (q) => q.where('kind', '=', kind!))
    .where((eb) => eb.or([eb('id', '=', id), eb('upstream_id', '=', id)]))
    .executeTakeFirst();
}

// What a listing shows: the request and result stay behind (a minutes transcript can be large).
const LIST_COLUMNS = ['id', 'kind', 'model', 'status', 'upstream_id', 'request_id', 'error', 'created_at', 'updated_at', 'finished_at', 'livemode'] as const;
export type TaskListRow = Pick<TaskRow, (typeof LIST_COLUMNS)[number]>;

/** The account's tasks newest first, on the (account_id, created_at) index; `olderThan` pages back. */
export async function listAccountTasks(
  db: Kysely<DB>,
  { accountId, kind, statuses, olderThan: after, limit }: { accountId: string; kind?: TaskKind; statuses?: TaskStatus[]; olderThan?: Position; limit: number },
): Promise<TaskListRow[]> {
  return db
    .selectFrom('tasks')
    .select(LIST_COLUMNS)
    .where('account_id', '=', accountId)
    .$if(kind !== undefined, (q) => q.where('kind', '=', kind!))
    .$if(statuses !== undefined, (q) => q.where('status', 'in', statuses!))
    .$if(after !== undefined, (q) => q.where(olderThan(after!)))
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

/** The kinds whose results are media: the gallery shows these. */
export type MediaTaskKind = Extract<TaskKind, 'image' | 'video' | 'erase'>;
export const MEDIA_TASK_KINDS: MediaTaskKind[] = ['image', 'video', 'erase'];

// A result longer than this is an image task answered inline (b64_json): megabytes of base64 and
// no URL to show. Left in the store, so a page of the gallery reads kilobytes, not a page of images.
const GALLERY_RESULT_MAX_CHARS = 64 * 1024;

export type GalleryRow = Pick<TaskRow, 'id' | 'kind' | 'model' | 'created_at' | 'finished_at' | 'result'>;

/**
 * The account's succeeded media tasks newest first, with their results (where the media URLs
 * are), on the (account_id, created_at) index as listAccountTasks; `olderThan` pages back.
 */
export async function listAccountGallery(
  db: Kysely<DB>,
  { accountId, kinds, olderThan: after, limit }: { accountId: string; kinds: MediaTaskKind[]; olderThan?: Position; limit: number },
): Promise<GalleryRow[]> {
  return db
    .selectFrom('tasks')
    .select(['id', 'kind', 'model', 'created_at', 'finished_at'])
    .select(sql<string | null>`case when length(result) <= ${GALLERY_RESULT_MAX_CHARS} then result end`.as('result'))
    .where('account_id', '=', accountId)
    .where('kind', 'in', kinds)
    .where('status', '=', 'succeeded')
    .$if(after !== undefined, (q) => q.where(olderThan(after!)))
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

/**
 * Whether a claim at `now` could take anything: a live task due to be polled, leased or not (a
 * superset of what the claim takes), read through the index by status and poll time. The engine
 * asks this before its claim, an update under the write lock built by the query builder, so that
 * a pass with nothing due costs the read alone.
 */
export async function mayHaveDueTasks(db: Kysely<DB>, now: number): Promise<boolean> {
  const { rows } = await sql`select 1 from tasks where status in (${sql.join(LIVE_STATUSES)}) and next_poll_at <= ${now} limit 1`.execute(db);
  return rows.length > 0;
}

/**
 * Leases up to `limit` live tasks that are due. On PostgreSQL the candidates are locked with SKIP
 * LOCKED, so two instances take disjoint sets and no task is claimed twice; on SQLite the
 * statement runs under the single write lock.
 */
export async function claimDueTasks(
  db: Kysely<DB>,
  { dialect, now, leaseMs, owner, limit }: { dialect: Dialect; now: number; leaseMs: number; owner: string; limit: number },
): Promise<TaskRow[]> {
  return (
    db
      // A materialized CTE, not `id in (subquery)`: PostgreSQL may rescan such a subquery, and a
      // rescanned `LIMIT … SKIP LOCKED` skips the rows this statement just took and returns more.
      .with(
        (cte) => cte('due').materialized(),
        (qb) => {
          const due = qb
            .selectFrom('tasks')
            .select('id')
            .where('status', 'in', LIVE_STATUSES)
            .where('next_poll_at', '<=', now)
            .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
            .orderBy('next_poll_at')
            .limit(limit);
          return dialect === 'postgres' ? due.forUpdate().skipLocked() : due;
        },
      )
      .updateTable('tasks')
      .set({ lease_until: now + leaseMs, lease_owner: owner })
      .where('id', 'in', (eb) => eb.selectFrom('due').select('due.id'))
      .returning(COLUMNS)
      .execute()
  );
}

/**
 * The upstream accepted the task: it now has an upstream id and waits to be polled. False when the
 * task had already left `submitting` (the engine failed it as abandoned).
 */
export async function markSubmitted(
  db: Kysely<DB>,
  {
    id,
    upstreamId,
    upstreamRecord,
    nextPollAt,
    channel = null,
    channelKey = null,
    now,
  }: {
    id: string;
    upstreamId: string | null;
    upstreamRecord: string | null;
    nextPollAt: number;
    /** The channel and key (fingerprint) that accepted the task: its polls go there. */
    channel?: string | null;
    channelKey?: string | null;
    now: number;
  },
): Promise<boolean> {
  const result = await db
    .updateTable('tasks')
    .set({
      status: 'queued',
      upstream_id: upstreamId,
      channel,
      channel_key: channelKey,
      upstream_record: upstreamRecord,
      next_poll_at: nextPollAt,
      lease_until: null,
      lease_owner: null,
      updated_at: now,
    })
    .where('id', '=', id)
    .where('status', '=', 'submitting')
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * Counts one more generation attempt, written before the upstream is asked, and shows the task as
 * `processing`. Only the lease holder may start one: false means the lease is gone and nothing
 * may be sent upstream.
 */
export async function startGenerationAttempt(db: Kysely<DB>, { id, owner, now }: { id: string; owner: string; now: number }): Promise<boolean> {
  const result = await db
    .updateTable('tasks')
    .set((eb) => ({ generation_attempts: eb('generation_attempts', '+', 1), status: 'processing', updated_at: now }))
    .where('id', '=', id)
    .where('lease_owner', '=', owner)
    .where('status', 'in', LIVE_STATUSES)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** A poll that found the task still running: new status, next poll time, lease given back. */
export async function recordPoll(
  db: Kysely<DB>,
  {
    id,
    owner,
    status,
    upstreamRecord,
    attempts,
    nextPollAt,
    now,
  }: {
    id: string;
    owner: string;
    status: TaskStatus;
    upstreamRecord?: string;
    attempts: number;
    nextPollAt: number;
    now: number;
  },
): Promise<boolean> {
  const result = await db
    .updateTable('tasks')
    .set({
      status,
      attempts,
      next_poll_at: nextPollAt,
      lease_until: null,
      lease_owner: null,
      updated_at: now,
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
  {
    id,
    status,
    result,
    error,
    upstreamRecord,
    now,
  }: {
    id: string;
    status: 'succeeded' | 'failed' | 'cancelled';
    result?: string | null;
    error?: string | null;
    upstreamRecord?: string;
    now: number;
  },
): Promise<TaskRow | undefined> {
  return db
    .updateTable('tasks')
    .set({
      status,
      result: result ?? null,
      error: error ?? null,
      finished_at: now,
      updated_at: now,
      lease_until: null,
      lease_owner: null,
      ...(upstreamRecord !== undefined && { upstream_record: upstreamRecord }),
    })
    .where('id', '=', id)
    .where('status', 'in', LIVE_STATUSES)
    .returning(COLUMNS)
    .executeTakeFirst();
}
