// Queries on `webhook_outbox`: one row per webhook event, holding everything its delivery
// needs (URL and its receiver, payload, attempt count, next attempt time), so a restarted
// instance resumes where a stopped one left off. A claim is a lease (`lease_until`), not a
// lock held open; a row under an unexpired lease is an attempt in flight.

import { type Kysely, type Selectable, sql } from 'kysely';
import { newId } from './ids.js';
import { olderThan, type Position } from './keyset.js';
import type { Dialect } from './migrations.js';
import type { DB, WebhookOutboxTable } from './schema.js';

export type WebhookRow = Selectable<WebhookOutboxTable>;
export type DeliveryOutcome = 'delivered' | 'retry' | 'dropped';

const COLUMNS = [
  'id',
  'account_id',
  'task_id',
  'event_id',
  'url',
  'receiver',
  'payload',
  'state',
  'attempts',
  'next_attempt_at',
  'lease_until',
  'last_status',
  'last_error',
  'created_at',
  'delivered_at',
] as const;

// Row ids name what they are, sorted by time like every row's (store/ids.ts).
function newWebhookId(): string {
  return newId('whk');
}

/** Where a webhook goes, for limiting attempts in flight: the URL's origin (scheme, host, port). */
export function receiverOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    // never sent (the URL policy refuses it), so it only needs to be a receiver of its own
    return url;
  }
}

/** Pass the caller's transaction so the row commits (or not) with the task's terminal state. */
export async function enqueueWebhook(
  db: Kysely<DB>,
  {
    accountId,
    taskId,
    eventId,
    url,
    payload,
    now,
  }: {
    accountId: string;
    taskId: string;
    eventId: string;
    url: string;
    payload: string;
    now: number;
  },
): Promise<WebhookRow> {
  return db
    .insertInto('webhook_outbox')
    .values({
      id: newWebhookId(),
      account_id: accountId,
      task_id: taskId,
      event_id: eventId,
      url,
      receiver: receiverOf(url),
      payload,
      state: 'pending',
      attempts: 0,
      next_attempt_at: now,
      lease_until: null,
      last_status: null,
      last_error: null,
      created_at: now,
      delivered_at: null,
    })
    .returning(COLUMNS)
    .executeTakeFirstOrThrow();
}

/**
 * Whether a claim at `now` could take anything: a pending row already due, leased or not (so a
 * superset of what the claim takes). One read of the index of pending rows by due time, where the
 * claim is an update under the write lock, built by the query builder: a poll with nothing due,
 * four times a second on every instance, costs a busy gateway's event loop the read alone.
 */
export async function mayHaveDueWebhooks(db: Kysely<DB>, now: number): Promise<boolean> {
  const { rows } = await sql`select 1 from webhook_outbox where state = 'pending' and next_attempt_at <= ${now} limit 1`.execute(db);
  return rows.length > 0;
}

/**
 * Leases up to `limit` pending rows due at `now` whose lease is absent or expired, until
 * `now + leaseMs`, and at most `perReceiver` per lane, an (account, receiver) pair, counting the
 * rows it already has under an unexpired lease (in flight here or on another instance): a lane's
 * backlog beyond its slots stays unclaimed, so it never holds a lease it cannot use. Lanes are per
 * account, not per receiver alone: one account's hanging callbacks to a shared receiver (a
 * platform's endpoint many accounts use) never hold another account's slots. Rows are taken by
 * the slot they would fill, then by due time: when `limit` binds, a lane with nothing in flight
 * goes before another's second or third attempt in flight. On PostgreSQL the candidates are locked
 * with SKIP LOCKED, so concurrent claimers take disjoint sets instead of queueing on one
 * another (two claimers racing for one receiver may each fill its last free slot); on SQLite
 * the statement runs under the database write lock, which serialises claimers.
 */
export async function claimDueWebhooks(
  db: Kysely<DB>,
  { now, leaseMs, limit, perReceiver, dialect }: { now: number; leaseMs: number; limit: number; perReceiver: number; dialect: Dialect },
): Promise<WebhookRow[]> {
  const rows = await db
    .with('busy', (qb) =>
      qb
        .selectFrom('webhook_outbox')
        .select((eb) => ['account_id', 'receiver', eb.fn.countAll<number>().as('in_flight')])
        .where('state', '=', 'pending')
        .where('lease_until', '>', now)
        .groupBy(['account_id', 'receiver']),
    )
    // slot: the lane's attempts in flight plus this row's place in its queue of due rows
    .with(
      (cte) => cte('ranked').materialized(),
      (qb) =>
        qb
          .selectFrom('webhook_outbox')
          .leftJoin('busy', (join) => join.onRef('busy.account_id', '=', 'webhook_outbox.account_id').onRef('busy.receiver', '=', 'webhook_outbox.receiver'))
          .select((eb) => [
            'webhook_outbox.id',
            'webhook_outbox.next_attempt_at',
            sql<number>`coalesce(${eb.ref('busy.in_flight')}, 0) + ${eb.fn
              .agg<number>('row_number')
              .over((ob) =>
                ob.partitionBy(['webhook_outbox.account_id', 'webhook_outbox.receiver']).orderBy('webhook_outbox.next_attempt_at').orderBy('webhook_outbox.id'),
              )}`.as('slot'),
          ])
          .where('webhook_outbox.state', '=', 'pending')
          .where('webhook_outbox.next_attempt_at', '<=', now)
          .where((w) => w.or([w('webhook_outbox.lease_until', 'is', null), w('webhook_outbox.lease_until', '<=', now)]))
          // a lane whose slots are all taken is left out before ranking: a hanging receiver's
          // backlog costs a check per row here, not a sort
          .where((w) => w.or([w('busy.in_flight', 'is', null), w('busy.in_flight', '<', perReceiver)])),
    )
    // A materialized CTE, not `id in (subquery)`: PostgreSQL may rescan such a subquery per
    // outer row, and a rescanned `LIMIT … FOR UPDATE SKIP LOCKED` skips the rows this very
    // statement just updated and returns further ones, claiming more than `limit`.
    .with(
      (cte) => cte('due').materialized(),
      (qb) => {
        const due = qb
          .selectFrom('webhook_outbox')
          .innerJoin('ranked', 'ranked.id', 'webhook_outbox.id')
          .select('webhook_outbox.id')
          .where('ranked.slot', '<=', perReceiver)
          // again on the row itself: under SKIP LOCKED PostgreSQL re-checks these on the locked version
          .where('webhook_outbox.state', '=', 'pending')
          .where((w) => w.or([w('webhook_outbox.lease_until', 'is', null), w('webhook_outbox.lease_until', '<=', now)]))
          .orderBy('ranked.slot')
          .orderBy('ranked.next_attempt_at')
          .limit(limit);
        return dialect === 'postgres' ? due.forUpdate(['webhook_outbox']).skipLocked() : due;
      },
    )
    .updateTable('webhook_outbox')
    .set({ lease_until: now + leaseMs })
    .where('id', 'in', (eb) => eb.selectFrom('due').select('due.id'))
    .returning(COLUMNS)
    .execute();
  return rows.sort((a, b) => a.next_attempt_at - b.next_attempt_at || a.created_at - b.created_at);
}

/**
 * Records the outcome of attempt number `attempts` (1-based) and ends the lease. Applies only
 * if the row still stands at `attempts - 1` and pending: a deliverer whose lease ran out while
 * another instance re-claimed the row cannot overwrite that instance's record. False when it did not apply.
 */
export async function recordDeliveryAttempt(
  db: Kysely<DB>,
  {
    id,
    attempts,
    outcome,
    nextAttemptAt,
    lastStatus = null,
    lastError = null,
    now,
  }: {
    id: string;
    attempts: number;
    outcome: DeliveryOutcome;
    nextAttemptAt?: number;
    lastStatus?: number | null;
    lastError?: string | null;
    now: number;
  },
): Promise<boolean> {
  if (outcome === 'retry' && nextAttemptAt === undefined) throw new Error('recordDeliveryAttempt: a retry needs nextAttemptAt');
  const result = await db
    .updateTable('webhook_outbox')
    .set({
      attempts,
      lease_until: null,
      last_status: lastStatus,
      last_error: lastError,
      ...(outcome === 'delivered'
        ? { state: 'delivered' as const, delivered_at: now }
        : outcome === 'dropped'
          ? { state: 'dropped' as const }
          : { state: 'pending' as const, next_attempt_at: nextAttemptAt }),
    })
    .where('id', '=', id)
    .where('state', '=', 'pending')
    .where('attempts', '=', attempts - 1)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function findWebhook(db: Kysely<DB>, id: string): Promise<WebhookRow | undefined> {
  return db.selectFrom('webhook_outbox').select(COLUMNS).where('id', '=', id).executeTakeFirst();
}

export async function listWebhooksForTask(db: Kysely<DB>, taskId: string): Promise<WebhookRow[]> {
  return db.selectFrom('webhook_outbox').select(COLUMNS).where('task_id', '=', taskId).orderBy('created_at').orderBy('id').execute();
}

// What an account sees of its deliveries: the payload is the task's own record, readable elsewhere.
const DELIVERY_COLUMNS = [
  'id',
  'task_id',
  'event_id',
  'url',
  'state',
  'attempts',
  'next_attempt_at',
  'last_status',
  'last_error',
  'created_at',
  'delivered_at',
] as const;
export type DeliveryRow = Pick<WebhookRow, (typeof DELIVERY_COLUMNS)[number]>;

/** The account's webhooks newest first (of one task, if given), on (account_id, created_at); `olderThan` pages back. */
export async function listAccountWebhooks(
  db: Kysely<DB>,
  { accountId, taskId, olderThan: after, limit }: { accountId: string; taskId?: string; olderThan?: Position; limit: number },
): Promise<DeliveryRow[]> {
  return db
    .selectFrom('webhook_outbox')
    .select(DELIVERY_COLUMNS)
    .where('account_id', '=', accountId)
    .$if(taskId !== undefined, (q) => q.where('task_id', '=', taskId!))
    .$if(after !== undefined, (q) => q.where(olderThan(after!)))
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

/**
 * Redelivery: re-arms a dropped row of the account in place — pending, due now, no lease, a fresh
 * attempt budget (attempts back to 0) — so the deliverer claims it as it claims any due row. The
 * same row, not a new one carrying the same event id: the outbox's lease rules then guarantee one
 * attempt in flight at a time across instances, the delivery keeps its id and event id, and a
 * second redeliver while it is pending is refused instead of queueing a twin. Only a dropped row
 * changes (a pending one still has attempts to come, a delivered one is done), in one conditional
 * UPDATE, so two concurrent requests re-arm it once. Undefined when nothing was re-armed.
 */
export async function rearmDroppedWebhook(
  db: Kysely<DB>,
  { id, accountId, now }: { id: string; accountId: string; now: number },
): Promise<DeliveryRow | undefined> {
  return db
    .updateTable('webhook_outbox')
    .set({ state: 'pending', attempts: 0, next_attempt_at: now, lease_until: null, last_status: null, last_error: null })
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .where('state', '=', 'dropped')
    .returning(DELIVERY_COLUMNS)
    .executeTakeFirst();
}

/** One delivery of the account, as the account sees it; undefined for another account's or an unknown id. */
export async function findAccountWebhook(db: Kysely<DB>, { id, accountId }: { id: string; accountId: string }): Promise<DeliveryRow | undefined> {
  return db.selectFrom('webhook_outbox').select(DELIVERY_COLUMNS).where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst();
}
