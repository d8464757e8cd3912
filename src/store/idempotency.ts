// Queries on `idempotency`: the first answer to an Idempotency-Key, kept 24 h (DESIGN §3).
import type { ExpressionBuilder, Kysely } from 'kysely';
import { ownerStoppedBefore } from './instances.js';
import type { DB } from './schema.js';

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

export type IdempotentBegin = { kind: 'started' } | { kind: 'replay'; statusCode: number; body: string } | { kind: 'running' } | { kind: 'mismatch' };

export interface IdempotentKey {
  accountId: string;
  key: string;
}

// Each step is one conditional statement, so two requests racing on one key cannot both start:
// the insert, the takeover of an expired record and the read each settle the race on their own.
export async function beginIdempotent(
  db: Kysely<DB>,
  {
    accountId,
    key,
    bodyHash,
    now,
    instanceId = null,
    requestId = null,
  }: IdempotentKey & { bodyHash: string; now: number; instanceId?: string | null; requestId?: string | null },
): Promise<IdempotentBegin> {
  // A record deleted (abandoned) between the steps below sends us round again; twice is plenty.
  for (let attempt = 0; attempt < 3; attempt++) {
    const inserted = await db
      .insertInto('idempotency')
      .values({ account_id: accountId, key, body_hash: bodyHash, state: 'running', created_at: now, instance_id: instanceId, request_id: requestId })
      .onConflict((oc) => oc.columns(['account_id', 'key']).doNothing())
      .executeTakeFirst();
    if (inserted.numInsertedOrUpdatedRows && inserted.numInsertedOrUpdatedRows > 0n) return { kind: 'started' };

    // Older than 24 h counts as never seen: take the record over for this request.
    const replaced = await db
      .updateTable('idempotency')
      .set({ body_hash: bodyHash, state: 'running', status_code: null, response_body: null, created_at: now, instance_id: instanceId, request_id: requestId })
      .where('account_id', '=', accountId)
      .where('key', '=', key)
      .where('created_at', '<', now - IDEMPOTENCY_TTL_MS)
      .executeTakeFirst();
    if (replaced.numUpdatedRows > 0n) return { kind: 'started' };

    const row = await db
      .selectFrom('idempotency')
      .select(['body_hash', 'state', 'status_code', 'response_body'])
      .where('account_id', '=', accountId)
      .where('key', '=', key)
      .executeTakeFirst();
    if (!row) continue;
    if (row.body_hash !== bodyHash) return { kind: 'mismatch' };
    if (row.state === 'running' || row.status_code === null) return { kind: 'running' };
    return { kind: 'replay', statusCode: row.status_code, body: row.response_body ?? '' };
  }
  return { kind: 'running' };
}

export async function completeIdempotent(
  db: Kysely<DB>,
  { accountId, key, statusCode, body }: IdempotentKey & { statusCode: number; body: string },
): Promise<boolean> {
  const result = await db
    .updateTable('idempotency')
    .set({ state: 'done', status_code: statusCode, response_body: body })
    .where('account_id', '=', accountId)
    .where('key', '=', key)
    .where('state', '=', 'running')
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * Keeps an answer whose first write failed (the store was cut off), once the store takes writes
 * again: on the record this request began, or a new one when a sweep removed it meanwhile (its
 * instance looked dead). A record another request began since is left alone.
 */
export async function keepAnswerLate(
  db: Kysely<DB>,
  record: IdempotentKey & { bodyHash: string; requestId: string; instanceId: string; startedAt: number; statusCode: number; body: string },
): Promise<void> {
  const answer = { state: 'done' as const, status_code: record.statusCode, response_body: record.body };
  const updated = await db
    .updateTable('idempotency')
    .set(answer)
    .where('account_id', '=', record.accountId)
    .where('key', '=', record.key)
    .where('request_id', '=', record.requestId)
    .executeTakeFirst();
  if (updated.numUpdatedRows > 0n) return;
  await db
    .insertInto('idempotency')
    .values({
      account_id: record.accountId,
      key: record.key,
      body_hash: record.bodyHash,
      created_at: record.startedAt,
      instance_id: record.instanceId,
      request_id: record.requestId,
      ...answer,
    })
    .onConflict((oc) => oc.columns(['account_id', 'key']).doNothing())
    .execute();
}

// Only a running record: a finished answer must keep being replayed, never re-executed.
export async function abandonIdempotent(db: Kysely<DB>, { accountId, key }: IdempotentKey): Promise<boolean> {
  const result = await db
    .deleteFrom('idempotency')
    .where('account_id', '=', accountId)
    .where('key', '=', key)
    .where('state', '=', 'running')
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/**
 * Running records whose instance stopped heartbeating: their call died with it (and its hold was
 * released), so a retry with the same key may run again instead of waiting out the 24 hours.
 */
export async function releaseRunningOfDeadInstances(db: Kysely<DB>, { heartbeatBefore }: { heartbeatBefore: number }): Promise<number> {
  const ofDeadInstance = (eb: ExpressionBuilder<DB, 'idempotency'>) =>
    eb.and([eb('state', '=', 'running'), eb('instance_id', 'is not', null), ownerStoppedBefore('idempotency', heartbeatBefore)]);
  const billed = (eb: ExpressionBuilder<DB, 'idempotency'>) =>
    eb.exists(eb.selectFrom('holds').select('holds.id').whereRef('holds.request_id', '=', 'idempotency.request_id').where('holds.state', '=', 'settled'));
  // Its call was billed but the answer died with the instance: the retry is told so, never charged again.
  await db
    .updateTable('idempotency')
    .set({ state: 'done', status_code: 500, response_body: JSON.stringify({ error: LOST_ANSWER, type: 'server_error' }) })
    .where((eb) => eb.and([ofDeadInstance(eb), billed(eb)]))
    .execute();
  const result = await db
    .deleteFrom('idempotency')
    .where((eb) => ofDeadInstance(eb))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

export const LOST_ANSWER =
  'the first request with this Idempotency-Key was answered and billed, but the gateway stopped before keeping its answer; it is not charged again';
