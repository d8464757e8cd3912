// Queries on `batch_lines`: a batch's lines are claimed by one instance each (pending → running,
// atomically), and each ends once (succeeded, failed or cancelled).
import { type Kysely, sql } from 'kysely';
import type { BatchLineRow } from './batches.js';
import type { Dialect } from './migrations.js';
import type { DB } from './schema.js';

export interface LineCounts {
  total: number;
  completed: number;
  failed: number;
  /** Lines not ended yet: pending or running. */
  unfinished: number;
  inputTokens: number;
  outputTokens: number;
}

const noLines = (): LineCounts => ({ total: 0, completed: 0, failed: 0, unfinished: 0, inputTokens: 0, outputTokens: 0 });

/** Each batch's lines counted by state, with the tokens its answered lines used. */
export async function countLines(db: Kysely<DB>, batchIds: readonly string[]): Promise<Map<string, LineCounts>> {
  const counts = new Map<string, LineCounts>(batchIds.map((id) => [id, noLines()]));
  if (batchIds.length === 0) return counts;
  const rows = await db
    .selectFrom('batch_lines')
    .select(['batch_id', 'status'])
    .select(sql<number>`count(*)`.as('lines'))
    .select(sql<number>`cast(coalesce(sum(input_tokens), 0) as bigint)`.as('input_tokens'))
    .select(sql<number>`cast(coalesce(sum(output_tokens), 0) as bigint)`.as('output_tokens'))
    .where('batch_id', 'in', batchIds)
    .groupBy(['batch_id', 'status'])
    .execute();
  for (const row of rows) {
    const count = counts.get(row.batch_id)!;
    const lines = Number(row.lines);
    count.total += lines;
    if (row.status === 'succeeded') count.completed += lines;
    else if (row.status === 'failed') count.failed += lines;
    else if (row.status === 'pending' || row.status === 'running') count.unfinished += lines;
    count.inputTokens += Number(row.input_tokens);
    count.outputTokens += Number(row.output_tokens);
  }
  return counts;
}

/** Lines of the account running now, on any instance. */
export async function runningLineCount(db: Kysely<DB>, accountId: string): Promise<number> {
  const row = await db
    .selectFrom('batch_lines')
    .select(sql<number>`count(*)`.as('lines'))
    .where('status', '=', 'running')
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  return Number(row.lines);
}

/**
 * Takes up to `limit` pending lines of the batch, in order, for `owner`. On PostgreSQL the candidates
 * are locked with SKIP LOCKED, so two instances take disjoint lines; on SQLite the statement runs
 * under the single write lock. Only a pending line of a batch in progress is taken: none is ever run twice.
 */
export async function claimLines(
  db: Kysely<DB>,
  { dialect, batchId, owner, now, limit }: { dialect: Dialect; batchId: string; owner: string; now: number; limit: number },
): Promise<BatchLineRow[]> {
  if (limit <= 0) return [];
  return db
    .with(
      (cte) => cte('due').materialized(),
      (qb) => {
        const due = qb
          .selectFrom('batch_lines')
          .select('line_no')
          .where('batch_id', '=', batchId)
          .where('status', '=', 'pending')
          // Only while the batch runs: none once it is cancelled or past its window.
          .where(({ exists, selectFrom }) =>
            exists(
              selectFrom('batches')
                .select('batches.id')
                .where('batches.id', '=', batchId)
                .where('batches.status', '=', 'in_progress')
                .where('batches.expired_at', 'is', null),
            ),
          )
          .orderBy('line_no')
          .limit(limit);
        return dialect === 'postgres' ? due.forUpdate().skipLocked() : due;
      },
    )
    .updateTable('batch_lines')
    .set({ status: 'running', owner, started_at: now })
    .where('batch_id', '=', batchId)
    .where('status', '=', 'pending')
    .where('line_no', 'in', (eb) => eb.selectFrom('due').select('due.line_no'))
    .returningAll()
    .execute();
}

export interface LineEnd {
  status: 'succeeded' | 'failed';
  requestId?: string | null;
  statusCode?: number | null;
  response?: string | null;
  errorCode?: string | null;
  errorMessage?: string | null;
  inputTokens?: number | null;
  outputTokens?: number | null;
}

/** Ends a running line of `owner`; false when it had already ended (the sweep took it for interrupted). */
export async function endLine(db: Kysely<DB>, { batchId, lineNo, owner, now }: { batchId: string; lineNo: number; owner: string; now: number }, end: LineEnd) {
  const result = await db
    .updateTable('batch_lines')
    .set({
      status: end.status,
      finished_at: now,
      request_id: end.requestId ?? null,
      status_code: end.statusCode ?? null,
      response: end.response ?? null,
      error_code: end.errorCode ?? null,
      error_message: end.errorMessage ?? null,
      input_tokens: end.inputTokens ?? null,
      output_tokens: end.outputTokens ?? null,
    })
    .where('batch_id', '=', batchId)
    .where('line_no', '=', lineNo)
    .where('status', '=', 'running')
    .where('owner', '=', owner)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Ends every pending line of the batch without running it: failed with `code`, or cancelled. */
export async function endPendingLines(
  db: Kysely<DB>,
  {
    batchId,
    now,
    status,
    code = null,
    message = null,
  }: { batchId: string; now: number; status: 'failed' | 'cancelled'; code?: string | null; message?: string | null },
): Promise<number> {
  const result = await db
    .updateTable('batch_lines')
    .set({ status, finished_at: now, error_code: code, error_message: message })
    .where('batch_id', '=', batchId)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** The x-request-id a line is sent with (batches/line-call.ts): its usage row carries it as `client_request_id`. */
export const lineRequestTag = (line: { batch_id: string; line_no: number }) => `${line.batch_id}:${line.line_no}`;

const INTERRUPTED_PER_PASS = 500;

/**
 * Running lines whose instance stopped heartbeating before `heartbeatBefore` (or is gone): maybe
 * sent upstream, so never sent again; failed with `code`. Their holds are ended by the crash
 * recovery. A line whose call was answered and settled before the stop (its usage row is there)
 * keeps that call's request id and says so (`charged(requestId)`): its answer is lost, its charge
 * stands, as a live call's whose caller was cut off after the answer.
 * `self`'s lines are never taken: its own late heartbeat does not make it dead to itself.
 */
export async function failInterruptedLines(
  db: Kysely<DB>,
  {
    heartbeatBefore,
    now,
    code,
    message,
    charged,
    self,
  }: { heartbeatBefore: number; now: number; code: string; message: string; charged: (requestId: string) => string; self?: string },
): Promise<number> {
  const lines = await db
    .selectFrom('batch_lines')
    .select(['batch_id', 'line_no', 'account_id', 'owner'])
    .where('status', '=', 'running')
    .$if(self !== undefined, (q) => q.where('owner', '!=', self!))
    .where(sql<boolean>`not exists (select 1 from instances where instances.id = batch_lines.owner and instances.heartbeat_at >= ${heartbeatBefore})`)
    .limit(INTERRUPTED_PER_PASS)
    .execute();
  let failed = 0;
  for (const line of lines) {
    const settled = await db
      .selectFrom('usage_all')
      .select('request_id')
      .where('account_id', '=', line.account_id)
      .where('client_request_id', '=', lineRequestTag(line))
      .executeTakeFirst();
    const requestId = settled?.request_id ?? null;
    const result = await db
      .updateTable('batch_lines')
      .set({
        status: 'failed',
        finished_at: now,
        error_code: code,
        error_message: requestId === null ? message : charged(requestId),
        request_id: requestId,
      })
      .where('batch_id', '=', line.batch_id)
      .where('line_no', '=', line.line_no)
      .where('status', '=', 'running')
      .$if(line.owner !== null, (q) => q.where('owner', '=', line.owner!))
      .executeTakeFirst();
    failed += Number(result.numUpdatedRows);
  }
  return failed;
}

/** The batch's lines in order, a page at a time (for its output and error files). */
export async function linesAfter(
  db: Kysely<DB>,
  { batchId, afterLineNo, limit }: { batchId: string; afterLineNo: number; limit: number },
): Promise<BatchLineRow[]> {
  return db.selectFrom('batch_lines').selectAll().where('batch_id', '=', batchId).where('line_no', '>', afterLineNo).orderBy('line_no').limit(limit).execute();
}

/** Each batch's lines still to end (pending or running), read from the index alone: the runner's check, made often. */
export async function unfinishedLines(db: Kysely<DB>, batchIds: readonly string[]): Promise<Map<string, number>> {
  const counts = new Map<string, number>(batchIds.map((id) => [id, 0]));
  if (batchIds.length === 0) return counts;
  const rows = await db
    .selectFrom('batch_lines')
    .select('batch_id')
    .select(sql<number>`count(*)`.as('lines'))
    .where('batch_id', 'in', batchIds)
    .where('status', 'in', ['pending', 'running'])
    .groupBy('batch_id')
    .execute();
  for (const row of rows) counts.set(row.batch_id, Number(row.lines));
  return counts;
}
