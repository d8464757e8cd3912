// Queries on `webhook_outbox`: one row per webhook event, holding everything its delivery
// needs (URL, payload, attempt count, next attempt time), so a restarted instance resumes
// where a stopped one left off. A claim is a lease (`lease_until`), not a lock held open.
import { randomBytes } from 'node:crypto';
import type { Kysely, Selectable } from 'kysely';
import type { Dialect } from './migrations.js';
import type { DB, WebhookOutboxTable } from './schema.js';

export type WebhookRow = Selectable<WebhookOutboxTable>;
export type DeliveryOutcome = 'delivered' | 'retry' | 'dropped';

const COLUMNS = [
  'id', 'account_id', 'task_id', 'event_id', 'url', 'payload', 'state', 'attempts', 'next_attempt_at',
  'lease_until', 'last_status', 'last_error', 'created_at', 'delivered_at',
] as const;

// Row ids name what they are, like store/ids.ts (which has no kind for outbox rows).
function newWebhookId(): string {
  return `whk_${randomBytes(16).toString('base64url')}`;
}

/** Pass the caller's transaction so the row commits (or not) with the task's terminal state. */
export async function enqueueWebhook(
  db: Kysely<DB>,
  { accountId, taskId, eventId, url, payload, now }: {
    accountId: string; taskId: string; eventId: string; url: string; payload: string; now: number;
  },
): Promise<WebhookRow> {
  return db
    .insertInto('webhook_outbox')
    .values({
      id: newWebhookId(), account_id: accountId, task_id: taskId, event_id: eventId, url, payload,
      state: 'pending', attempts: 0, next_attempt_at: now, lease_until: null, last_status: null,
      last_error: null, created_at: now, delivered_at: null,
    })
    .returning(COLUMNS)
    .executeTakeFirstOrThrow();
}

/**
 * Leases up to `limit` pending rows due at `now` whose lease is absent or expired, until
 * `now + leaseMs`. On PostgreSQL the candidates are locked with SKIP LOCKED, so concurrent
 * claimers take disjoint sets instead of queueing on one another; on SQLite the statement runs
 * under the database write lock, which serialises claimers the same way.
 */
export async function claimDueWebhooks(
  db: Kysely<DB>,
  { now, leaseMs, limit, dialect }: { now: number; leaseMs: number; limit: number; dialect: Dialect },
): Promise<WebhookRow[]> {
  const rows = await db
    // A materialized CTE, not `id in (subquery)`: PostgreSQL may rescan such a subquery per
    // outer row, and a rescanned `LIMIT … FOR UPDATE SKIP LOCKED` skips the rows this very
    // statement just updated and returns further ones, claiming more than `limit`.
    .with((cte) => cte('due').materialized(), (qb) => {
      const due = qb
        .selectFrom('webhook_outbox')
        .select('id')
        .where('state', '=', 'pending')
        .where('next_attempt_at', '<=', now)
        .where((w) => w.or([w('lease_until', 'is', null), w('lease_until', '<=', now)]))
        .orderBy('next_attempt_at')
        .limit(limit);
      return dialect === 'postgres' ? due.forUpdate().skipLocked() : due;
    })
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
  { id, attempts, outcome, nextAttemptAt, lastStatus = null, lastError = null, now }: {
    id: string; attempts: number; outcome: DeliveryOutcome; nextAttemptAt?: number;
    lastStatus?: number | null; lastError?: string | null; now: number;
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
      ...(outcome === 'delivered' ? { state: 'delivered' as const, delivered_at: now }
        : outcome === 'dropped' ? { state: 'dropped' as const }
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
  return db
    .selectFrom('webhook_outbox')
    .select(COLUMNS)
    .where('task_id', '=', taskId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}
