// The task engine: claims due tasks with a lease, asks the upstream how each is doing, and moves
// finished ones to their terminal state — settling or releasing the hold and enqueueing the
// webhook in the same transaction, so a crash at any point leaves work that a restart finishes.

import { randomBytes } from 'node:crypto';
import { type SettleOutcome, settleHoldIn } from '../billing/ledger.js';
import { savePriceList } from '../billing/price-lists.js';
import { priceMicros, usableUnits, withRequestFee } from '../billing/prices.js';
import type { SettlementMetrics } from '../billing/settlements.js';
import type { Price } from '../config/schema.js';
import { isWebUrl } from '../net/web-url.js';
import type { Catalogue } from '../pipeline/catalogue.js';
import type { ResolvedModel } from '../pipeline/types.js';
import { onTaskChannel } from '../routing/task-channel.js';
import { unavailableTestCatalogue } from '../routing/test-catalogue.js';
import { insertAssets } from '../store/assets.js';
import { newId } from '../store/ids.js';
import type { Store } from '../store/open.js';
import type { TaskKind } from '../store/schema.js';
import { claimDueTasks, finishTask, mayHaveDueTasks, recordPoll, startGenerationAttempt, type TaskRow } from '../store/tasks.js';
import { enqueueWebhook } from '../store/webhook-outbox.js';
import { endFailedTaskHold } from './failed-hold.js';
import type { PollOutcome, TaskError, TaskKindHandler } from './types.js';
import { webhookPayload } from './webhook-payload.js';

export interface EngineLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface TaskEngineOptions {
  store: Store;
  catalogue: Catalogue;
  /** A test task's catalogue (tasks.livemode 0): its polls never leave the sandbox. None: test tasks fail. */
  testCatalogue?: Catalogue;
  handlers: Record<TaskKind, TaskKindHandler>;
  pollIntervalMs: Record<TaskKind, number>;
  leaseMs: number;
  tickMs: number;
  /** A task still unfinished this long after creation fails and is refunded. */
  taskTimeoutMs: number;
  /** Paid upstream work (an image generation) is started at most this many times per task, crashes included. */
  maxGenerationAttempts: number;
  log: EngineLogger;
  /** Where a task's charge is counted, as every call's is (the billed total in /metrics). */
  metrics?: SettlementMetrics;
  now?: () => number;
}

export interface TaskEngine {
  start(): void;
  stop(): Promise<void>;
  /** One pass: claim what is due and work on it. Returns how many tasks were looked at. */
  runOnce(): Promise<number>;
}

export const MODEL_TYPE_OF_KIND = { image: 'image', video: 'video', erase: 'erase', minutes: 'minutes' } as const;
const CLAIM_LIMIT = 16;
const MAX_BACKOFF_FACTOR = 8;

/** Polls slow down as a task runs long, and faster still after upstream errors. */
function nextPollDelay(intervalMs: number, attempts: number, failed: boolean): number {
  const factor = failed ? 2 ** Math.min(attempts, 3) : 2 ** Math.floor(attempts / 10);
  return intervalMs * Math.min(factor, MAX_BACKOFF_FACTOR);
}

/** Thrown by startGeneration when another instance holds the task now: nothing may be sent upstream. */
class LeaseLostError extends Error {
  override name = 'LeaseLostError';
}

const generationsExhausted = (attempts: number): TaskError => ({
  code: 'generation_attempts_exhausted',
  message: `the upstream did not complete the work in ${attempts} attempt${attempts === 1 ? '' : 's'}`,
});

export function createTaskEngine(options: TaskEngineOptions): TaskEngine {
  const { store, catalogue, handlers, log } = options;
  const now = options.now ?? Date.now;
  const owner = `engine_${randomBytes(6).toString('hex')}`;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<number> | undefined;
  let stopping = false;
  const controller = new AbortController();

  function countCharge(model: string, { chargedMicros, unbilledMicros }: SettleOutcome) {
    options.metrics?.addBilled(model, chargedMicros);
    if (unbilledMicros > 0) options.metrics?.addUnbilled(model, unbilledMicros);
  }

  async function finish(
    task: TaskRow,
    model: ResolvedModel | undefined,
    outcome: Extract<PollOutcome, { state: 'succeeded' | 'failed' }> | { state: 'failed'; error: TaskError },
  ) {
    const handler = handlers[task.kind as TaskKind];
    const at = now();
    let settled: { model: string; outcome: SettleOutcome } | undefined;
    // At the prices of its submission (tasks/submit.ts); a task from before they were kept, the model's now.
    const price = model && (task.prices ? (JSON.parse(task.prices) as Price) : model.config.price);
    // Its price list is kept before its usage row names it, outside the transaction (price-lists.ts).
    if (price && outcome.state === 'succeeded') await savePriceList(store, price);
    await store.db.transaction().execute(async (trx) => {
      settled = undefined; // (a transaction retried from the start settles again)
      const upstreamRecord = 'upstreamRecord' in outcome && outcome.upstreamRecord !== undefined ? JSON.stringify(outcome.upstreamRecord) : undefined;
      const finished =
        outcome.state === 'succeeded'
          ? await finishTask(trx, { id: task.id, status: 'succeeded', result: JSON.stringify(outcome.result), upstreamRecord, now: at })
          : await finishTask(trx, { id: task.id, status: 'failed', error: JSON.stringify(outcome.error), upstreamRecord, now: at });
      if (!finished) return; // another instance got there first: it settles, we do nothing
      if (outcome.state === 'succeeded' && price) {
        const units = withRequestFee(usableUnits(outcome.units, {}), price);
        const chargeMicros = priceMicros(units, price);
        if (finished.hold_id) {
          const requestId = finished.request_id ?? undefined;
          const charged = await settleHoldIn(trx, finished.hold_id, { chargeMicros, units, requestId, prices: price, now: at });
          if (charged.applied) settled = { model: finished.model, outcome: charged };
        }
        await insertAssets(
          trx,
          // Only http(s) media joins the library: a browser follows these links (net/web-url.ts).
          (outcome.assets ?? [])
            .filter((asset) => isWebUrl(asset.url))
            .map((asset) => ({
              id: newId('asset'),
              account_id: finished.account_id,
              kind: asset.kind,
              url: asset.url,
              task_id: finished.id,
              source_task_id: asset.sourceTaskId ?? null,
              created_at: at,
            })),
        );
      } else if (finished.hold_id) {
        const requestId = finished.request_id ?? undefined;
        await endFailedTaskHold(trx, { holdId: finished.hold_id, handler, requestId, note: `task ${finished.id} failed`, now: at });
      }
      if (finished.callback_url) {
        const eventId = newId('evt');
        const payload = webhookPayload(finished, {
          eventId,
          webhookType: handler.webhookType,
          status: outcome.state === 'succeeded' ? 'succeeded' : 'failed',
          error: outcome.state === 'failed' ? outcome.error : undefined,
          extra: 'webhook' in outcome ? outcome.webhook : undefined,
        });
        await enqueueWebhook(trx, {
          accountId: finished.account_id,
          taskId: finished.id,
          eventId,
          url: finished.callback_url,
          payload: JSON.stringify(payload),
          now: at,
        });
      }
    });
    // Counted once the charge is committed, as the pipeline's settles are (billing/settlements.ts).
    if (settled) countCharge(settled.model, settled.outcome);
    log.info({ taskId: task.id, kind: task.kind, outcome: outcome.state }, 'task finished');
  }

  async function work(task: TaskRow): Promise<void> {
    const kind = task.kind as TaskKind;
    const handler = handlers[kind];
    if (task.status === 'submitting') {
      // Its submitter's lease ran out: that request died before the upstream answered.
      return finish(task, undefined, {
        state: 'failed',
        error: { code: 'submit_interrupted', message: 'the gateway stopped before the upstream accepted the task' },
      });
    }
    if (task.generation_attempts >= options.maxGenerationAttempts) {
      // Every attempt allowed was started, the last by an instance that died in it (the lease ran
      // out): the upstream may have done that work, so it is not asked again.
      log.warn({ taskId: task.id, generationAttempts: task.generation_attempts }, 'generation attempts exhausted by an interrupted attempt; failing the task');
      return finish(task, undefined, { state: 'failed', error: generationsExhausted(task.generation_attempts) });
    }
    let model: ResolvedModel;
    try {
      const tasksCatalogue = task.livemode === 0 ? (options.testCatalogue ?? unavailableTestCatalogue) : catalogue;
      model = onTaskChannel(tasksCatalogue.resolve(task.model, MODEL_TYPE_OF_KIND[kind]), task);
    } catch {
      return finish(task, undefined, { state: 'failed', error: { code: 'model_removed', message: `model ${task.model} is no longer configured` } });
    }
    const interval = options.pollIntervalMs[kind];
    let outcome: PollOutcome;
    let generationStarted = false;
    // A long poll (an image being generated) keeps its lease, so no other instance starts it again.
    const heartbeat = setInterval(
      () => {
        store.db
          .updateTable('tasks')
          .set({ lease_until: now() + options.leaseMs })
          .where('id', '=', task.id)
          .where('lease_owner', '=', owner)
          .execute()
          .catch((error) => log.warn({ err: error, taskId: task.id }, 'renewing a task lease failed'));
      },
      Math.max(1, Math.floor(options.leaseMs / 3)),
    );
    heartbeat.unref();
    try {
      outcome = await handler.poll(task, model, {
        signal: controller.signal,
        startGeneration: async () => {
          // Written before the upstream is asked, so an attempt cut off by a crash still counts.
          if (!(await startGenerationAttempt(store.db, { id: task.id, owner, now: now() })))
            throw new LeaseLostError(`task ${task.id} is no longer leased by ${owner}`);
          generationStarted = true;
        },
      });
    } catch (error) {
      if (error instanceof LeaseLostError) {
        log.warn({ taskId: task.id }, 'the task lease was lost before a generation; its new holder carries on');
        return;
      }
      const generations = task.generation_attempts + (generationStarted ? 1 : 0);
      if (generationStarted && generations >= options.maxGenerationAttempts) {
        // The upstream may have done (and charged for) the work each time: never asked blindly again.
        log.warn({ err: error, taskId: task.id, generationAttempts: generations }, 'the last generation attempt failed; failing the task');
        return finish(task, model, { state: 'failed', error: generationsExhausted(generations) });
      }
      if (now() - task.created_at > options.taskTimeoutMs) {
        return finish(task, model, { state: 'failed', error: { code: 'upstream_timeout', message: 'the upstream did not finish the task in time' } });
      }
      log.warn(
        { err: error, taskId: task.id, generationAttempts: generations },
        generationStarted ? 'a generation attempt failed; will try again' : 'polling the upstream failed; will retry',
      );
      const attempts = task.attempts + 1;
      // Generation attempts back off by their own count: 2, 4, 8 poll intervals.
      const delay = generationStarted ? nextPollDelay(interval, generations, true) : nextPollDelay(interval, attempts, true);
      const status = generationStarted ? 'processing' : (task.status as 'queued' | 'processing');
      await recordPoll(store.db, { id: task.id, owner, status, attempts, nextPollAt: now() + delay, now: now() });
      return;
    } finally {
      clearInterval(heartbeat);
    }
    if (outcome.state === 'running') {
      if (now() - task.created_at > options.taskTimeoutMs) {
        return finish(task, model, { state: 'failed', error: { code: 'upstream_timeout', message: 'the upstream did not finish the task in time' } });
      }
      const attempts = task.attempts + 1;
      const upstreamRecord = outcome.upstreamRecord === undefined ? undefined : JSON.stringify(outcome.upstreamRecord);
      await recordPoll(store.db, {
        id: task.id,
        owner,
        status: outcome.status,
        upstreamRecord,
        attempts,
        nextPollAt: now() + nextPollDelay(interval, attempts, false),
        now: now(),
      });
      return;
    }
    try {
      await finish(task, model, outcome);
    } catch (error) {
      // A terminal step that keeps failing (a result we cannot store, say) must not keep the task
      // and its hold alive forever: past the timeout it fails, and the hold is released.
      if (now() - task.created_at <= options.taskTimeoutMs) throw error;
      log.error({ err: error, taskId: task.id }, 'finishing the task keeps failing; failing it and releasing its hold');
      await finish(task, model, { state: 'failed', error: { code: 'finish_failed', message: 'the gateway could not record the result' } });
    }
  }

  async function runOnce(): Promise<number> {
    const at = now();
    if (!(await mayHaveDueTasks(store.db, at))) return 0;
    const tasks = await claimDueTasks(store.db, { dialect: store.dialect, now: at, leaseMs: options.leaseMs, owner, limit: CLAIM_LIMIT });
    await Promise.all(
      tasks.map((task) =>
        work(task).catch((error) => log.error({ err: error, taskId: task.id }, 'task step failed; its lease will expire and it will be retried')),
      ),
    );
    return tasks.length;
  }

  function schedule() {
    if (stopping) return;
    timer = setTimeout(async () => {
      running = runOnce().catch((error) => {
        log.error({ err: error }, 'task engine pass failed');
        return 0;
      });
      const worked = await running;
      running = undefined;
      // Straight on while there is a backlog; otherwise wait a tick.
      if (worked >= CLAIM_LIMIT) setImmediate(schedule);
      else schedule();
    }, options.tickMs);
    timer.unref();
  }

  return {
    start() {
      stopping = false;
      schedule();
    },
    async stop() {
      stopping = true;
      if (timer) clearTimeout(timer);
      controller.abort();
      await running;
    },
    runOnce,
  };
}
