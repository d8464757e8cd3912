// Runs batches in the background, in this process: each account's lines at a bounded concurrency,
// each line through the gateway's own routes (line-call.ts), held and settled on its own at the
// batch price. Line state is in the store, so a restart resumes where it stopped, and no line is
// ever sent twice: a line claimed by an instance that died (maybe sent upstream) fails as
// interrupted and its hold is ended by the crash recovery (billing/recovery.ts); pending lines run.
import type { FastifyInstance } from 'fastify';
import {
  claimLines,
  countLines,
  endLine,
  endPendingLines,
  failInterruptedLines,
  type LineEnd,
  runningLineCount,
  unfinishedLines,
} from '../store/batch-lines.js';
import { type BatchLineRow, type BatchRow, claimFinishing, finishBatch, markExpiring, unfinishedBatches } from '../store/batches.js';
import { insertFile } from '../store/files.js';
import { newId } from '../store/ids.js';
import type { Store } from '../store/open.js';
import { enqueueWebhook } from '../store/webhook-outbox.js';
import type { BatchLineAuth } from './line-auth.js';
import { callLine } from './line-call.js';
import { writeBatchFiles } from './output-files.js';
import { batchView } from './views.js';

/** Lines of one account running at once, over all its batches (a configuration setting to come). */
export const BATCH_LINES_PER_ACCOUNT = 4;
/** How often the runner looks for work when nothing woke it. */
export const BATCH_TICK_MS = 250;
/** How long an instance may take to write a finished batch's files before another takes over. */
const FINISH_LEASE_MS = 60_000;
const BATCHES_PER_PASS = 500;

export const LINE_INTERRUPTED = 'batch_line_interrupted';

export interface BatchRunnerLog {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface BatchRunnerDeps {
  store: Store;
  auth: BatchLineAuth;
  /** This process in `instances`: the owner of the lines it runs. */
  instanceId: string;
  /** An instance silent this long is dead (recovery.dead_after_ms): its running lines are failed. */
  deadAfterMs: number;
  /** Where the output and error files are written (the stored files' folder), and how long they are kept. */
  filesDir: string;
  fileTtlMs: number;
  log: BatchRunnerLog;
  linesPerAccount?: number;
  tickMs?: number;
}

export interface BatchRunner {
  /** Starts the passes, sending lines to `app`. */
  start(app: FastifyInstance): void;
  /** A pass soon: a batch was created or cancelled. */
  wake(): void;
  /** Takes no more lines; waits up to `graceMs` for the running ones to end. */
  stop(graceMs: number): Promise<void>;
  /** One pass now (tests). */
  pass(): Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms).unref());

export function createBatchRunner(deps: BatchRunnerDeps): BatchRunner {
  const { store, log } = deps;
  const perAccount = deps.linesPerAccount ?? BATCH_LINES_PER_ACCOUNT;
  const tickMs = deps.tickMs ?? BATCH_TICK_MS;
  const inFlight = new Set<Promise<void>>();
  let app: FastifyInstance | undefined;
  let stopped = true;
  let timer: NodeJS.Timeout | undefined;
  let passing: Promise<void> | undefined;
  let again = false;

  /** Ends the line in the store, retried while the store refuses: it is running under this live instance until then. */
  async function recordEnd(line: BatchLineRow, end: LineEnd) {
    for (let attempt = 1; ; attempt++) {
      try {
        await endLine(store.db, { batchId: line.batch_id, lineNo: line.line_no, owner: deps.instanceId, now: Date.now() }, end);
        return;
      } catch (error) {
        if (attempt >= 30) throw error;
        await sleep(1_000);
      }
    }
  }

  function launch(line: BatchLineRow) {
    const running = (async () => {
      let end: LineEnd;
      try {
        end = await callLine(app!, deps.auth, line);
      } catch (error) {
        log.error({ err: error, batchId: line.batch_id, customId: line.custom_id }, 'a batch line could not be run');
        end = { status: 'failed', errorCode: 'batch_line_failed', errorMessage: 'the gateway could not run this request' };
      }
      await recordEnd(line, end);
      // The balance (or the key's spend cap) ran out: the batch's other lines would be refused too, so none is sent.
      if (end.statusCode === 402) {
        const cap = end.response?.includes('spend cap') === true;
        const code = cap ? 'spend_cap_reached' : 'insufficient_balance';
        const message = cap
          ? "the key's spend cap was reached before this request ran; nothing was charged for it"
          : "the account's balance ran out before this request ran; nothing was charged for it";
        await endPendingLines(store.db, { batchId: line.batch_id, now: Date.now(), status: 'failed', code, message });
      }
    })()
      .catch((error) => log.error({ err: error, batchId: line.batch_id, customId: line.custom_id }, 'a batch line could not be recorded as ended'))
      .finally(() => {
        inFlight.delete(running);
        wake();
      });
    inFlight.add(running);
  }

  /** Writes the files of a batch whose lines have all ended, and ends it (with its webhook), if this instance takes it. */
  async function finish(candidate: BatchRow) {
    const now = Date.now();
    const batch = await claimFinishing(store.db, { id: candidate.id, owner: deps.instanceId, now, leaseMs: FINISH_LEASE_MS });
    if (!batch) return;
    const status = batch.status === 'cancelling' ? 'cancelled' : batch.expired_at !== null ? 'expired' : 'completed';
    const files = await writeBatchFiles(store, batch, { dir: deps.filesDir, ttlMs: deps.fileTtlMs, now });
    try {
      const counts = (await countLines(store.db, [batch.id])).get(batch.id)!;
      const ended = await store.db.transaction().execute(async (trx) => {
        if (files.output) await insertFile(trx, files.output);
        if (files.error) await insertFile(trx, files.error);
        const row = await finishBatch(trx, {
          id: batch.id,
          owner: deps.instanceId,
          status,
          now,
          outputFileId: files.output?.id ?? null,
          errorFileId: files.error?.id ?? null,
        });
        if (!row) throw new Error('the lease on finishing the batch was lost');
        if (row.callback_url) {
          const eventId = newId('evt');
          const payload = {
            event_id: eventId,
            type: `batch.${status}`,
            livemode: row.livemode !== 0,
            created_at: Math.floor(now / 1000),
            data: batchView(row, counts),
          };
          await enqueueWebhook(trx, { accountId: row.account_id, taskId: row.id, eventId, url: row.callback_url, payload: JSON.stringify(payload), now });
        }
        return row;
      });
      log.info({ batchId: ended.id, status, completed: counts.completed, failed: counts.failed }, 'batch finished');
    } catch (error) {
      await files.discard();
      throw error;
    }
  }

  async function pass() {
    const batches = await unfinishedBatches(store.db, BATCHES_PER_PASS);
    if (batches.length === 0) return;
    const now = Date.now();
    const interrupted = await failInterruptedLines(store.db, {
      heartbeatBefore: now - deps.deadAfterMs,
      now,
      code: LINE_INTERRUPTED,
      self: deps.instanceId,
      message: 'the gateway instance running this request stopped before it ended; it was not sent again, and nothing was charged for it',
      charged: (requestId) =>
        `the gateway instance running this request stopped after it was answered and charged (request ${requestId}), before its answer was kept; it was not sent again`,
    });
    if (interrupted > 0) log.warn({ lines: interrupted }, 'batch lines of stopped instances failed as interrupted');
    for (const id of await markExpiring(store.db, now)) {
      await endPendingLines(store.db, { batchId: id, now, status: 'failed', code: 'batch_expired', message: 'the batch expired before this request ran' });
    }
    const ids = batches.map((batch) => batch.id);
    const unfinished = await unfinishedLines(store.db, ids);
    const budgets = new Map<string, number>();
    for (const batch of batches) {
      if (batch.status === 'cancelling' && unfinished.get(batch.id)! > 0) {
        await endPendingLines(store.db, { batchId: batch.id, now, status: 'cancelled' });
      }
      if (batch.status === 'in_progress' && batch.expired_at === null && batch.expires_at > now && !stopped) {
        let budget = budgets.get(batch.account_id) ?? perAccount - (await runningLineCount(store.db, batch.account_id));
        if (budget > 0) {
          const lines = await claimLines(store.db, { dialect: store.dialect, batchId: batch.id, owner: deps.instanceId, now: Date.now(), limit: budget });
          budget -= lines.length;
          for (const line of lines) launch(line);
        }
        budgets.set(batch.account_id, budget);
      }
    }
    // Read again: lines may have ended (or been cancelled, expired, interrupted) since.
    const after = await unfinishedLines(store.db, ids);
    for (const batch of batches) {
      if (after.get(batch.id)! > 0) continue;
      try {
        await finish(batch);
      } catch (error) {
        log.error({ err: error, batchId: batch.id }, 'finishing a batch failed; a later pass retries');
      }
    }
  }

  function schedule(ms: number) {
    if (stopped) return;
    clearTimeout(timer);
    timer = setTimeout(run, ms);
    timer.unref();
  }

  function run() {
    if (passing) {
      again = true;
      return;
    }
    passing = pass()
      .catch((error) => log.error({ err: error }, 'a batch runner pass failed; the next one retries'))
      .finally(() => {
        passing = undefined;
        if (again) {
          again = false;
          schedule(0);
        } else schedule(tickMs);
      });
  }

  function wake() {
    schedule(0);
  }

  return {
    start(target) {
      app = target;
      stopped = false;
      schedule(0);
    },
    wake,
    async stop(graceMs) {
      stopped = true;
      clearTimeout(timer);
      await passing;
      if (inFlight.size > 0) await Promise.race([Promise.allSettled([...inFlight]), sleep(graceMs)]);
    },
    pass: () => {
      const running = passing ?? pass();
      return running;
    },
  };
}
