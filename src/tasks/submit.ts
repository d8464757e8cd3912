// Creating a task: the pipeline's front half (model, rate limit, estimate, hold) written once for
// every asynchronous endpoint. The hold and the task row are written together; the upstream is
// then asked, once, to create its task, and a refusal there releases the hold at once.
import { requireModelAllowed } from '../billing/key-limits.js';
import { holdFundsIn } from '../billing/ledger.js';
import type { Units } from '../billing/prices.js';
import { holdFor, type Pipeline, type PipelineLogger } from '../pipeline/metered-call.js';
import type { Caller, ResolvedModel } from '../pipeline/types.js';
import { callWithFailover, surelyNotStarted } from '../routing/failover.js';
import { newId } from '../store/ids.js';
import type { Store } from '../store/open.js';
import type { TaskKind } from '../store/schema.js';
import { findTask, finishTask, insertTask, markSubmitted, type TaskRow } from '../store/tasks.js';
import { MODEL_TYPE_OF_KIND } from './engine.js';
import { endFailedTaskHold } from './failed-hold.js';
import type { TaskKindHandler } from './types.js';

export interface SubmitDeps {
  store: Store;
  pipeline: Pipeline;
  handlers: Record<TaskKind, TaskKindHandler>;
  pollIntervalMs: Record<TaskKind, number>;
  /** How long a submitting request may take before the engine treats it as dead. */
  submitLeaseMs: number;
}

export interface SubmitRequest {
  kind: TaskKind;
  caller: Caller;
  modelId: string | undefined;
  /** The normalised request, kept on the task for the handler. */
  request: unknown;
  estimate(model: ResolvedModel): Units;
  callbackUrl?: string | null;
  requestId: string;
  clientRequestId?: string | null;
}

const ID_PREFIX = { image: 'img', video: 'vid', erase: 'erase', minutes: 'min' } as const;

export async function submitTask(deps: SubmitDeps, args: SubmitRequest, log: PipelineLogger): Promise<TaskRow> {
  const { store, pipeline } = deps;
  const model = pipeline.catalogueFor(args.caller.livemode).resolve(args.modelId, MODEL_TYPE_OF_KIND[args.kind]);
  requireModelAllowed(args.caller.limits, args.modelId, model.id);
  await pipeline.admit(args.caller, log);
  const estimate = args.estimate(model);
  // The prices of the submission: the task settles at them, whatever changes before it ends.
  const price = pipeline.prices.priceFor(args.caller.accountId, model.id, model.config.price, Date.now());
  const taskId = newId(ID_PREFIX[args.kind]);
  const at = Date.now();

  await store.db.transaction().execute(async (trx) => {
    const hold = await holdFundsIn(trx, {
      accountId: args.caller.accountId,
      keyId: args.caller.keyId,
      keyLimits: args.caller.limits,
      amountMicros: holdFor({ ...model.config, price }, estimate),
      requestId: args.requestId,
      clientRequestId: args.clientRequestId,
      model: model.id,
      endpoint: `tasks.${args.kind}`,
      taskId,
      now: at,
    });
    await insertTask(trx, {
      id: taskId,
      account_id: args.caller.accountId,
      key_id: args.caller.keyId,
      request_id: args.requestId,
      kind: args.kind,
      model: model.id,
      status: 'submitting',
      upstream_id: null,
      hold_id: hold.holdId,
      request: JSON.stringify(args.request),
      result: null,
      error: null,
      upstream_record: null,
      callback_url: args.callbackUrl ?? null,
      attempts: 0,
      // Until the upstream answers, the submitting request holds the lease; if it dies, the engine fails the task.
      next_poll_at: at,
      lease_until: at + deps.submitLeaseMs,
      lease_owner: 'submit',
      created_at: at,
      updated_at: at,
      finished_at: null,
      // Remembered on the row: the engine's polls resolve the model in the same catalogue.
      livemode: args.caller.livemode ? 1 : 0,
      prices: JSON.stringify(price),
    });
  });

  const task = (await findTask(store.db, taskId))!;
  let submitted: { upstreamId: string | null; upstreamRecord?: unknown };
  let acceptedBy = model;
  let tried = model;
  try {
    // Not stopped when the caller leaves: the upstream may already have taken the task, and only
    // its id lets the engine follow it to its end and bill it. Bounded well inside the submit
    // lease instead: past the lease the engine fails the task, and an upstream that answered
    // later would hold a task nobody tracks.
    const signal = AbortSignal.timeout(Math.floor(deps.submitLeaseMs / 2));
    const { routing } = pipeline;
    // Another channel is asked only when the last surely did not take the task (failover.ts).
    const served = await callWithFailover(
      model,
      routing.plan(model.routes),
      (view) => {
        tried = view;
        return deps.handlers[args.kind].submit(task, view, signal);
      },
      { health: routing.health, maxAttempts: routing.maxAttempts, signal, mayRepeat: surelyNotStarted },
    );
    submitted = served.result;
    acceptedBy = served.model;
  } catch (error) {
    // Never submitted again: an upstream that timed out or answered garbage may still have taken
    // the task, and a second submit would make (and bill us for) a second one. Fail it and give
    // the money back, in one step.
    await store.db.transaction().execute(async (trx) => {
      const failed = await finishTask(trx, {
        id: taskId,
        status: 'failed',
        error: JSON.stringify({ code: 'upstream_refused', message: 'the upstream refused the task' }),
        now: Date.now(),
      });
      if (failed?.hold_id) {
        const requestId = failed.request_id ?? undefined;
        await endFailedTaskHold(trx, { holdId: failed.hold_id, handler: deps.handlers[args.kind], requestId, note: 'upstream refused the task' });
      }
    });
    throw pipeline.upstreamFailure(error, tried, log);
  }
  const now = Date.now();
  const tracked = await markSubmitted(store.db, {
    id: taskId,
    upstreamId: submitted.upstreamId,
    upstreamRecord: submitted.upstreamRecord === undefined ? null : JSON.stringify(submitted.upstreamRecord),
    // A task the engine runs itself starts at once; an upstream task is first looked at after one interval.
    nextPollAt: submitted.upstreamId === null ? now : now + deps.pollIntervalMs[args.kind],
    channel: acceptedBy.upstream.name,
    channelKey: acceptedBy.upstream.keyId ?? null,
    now,
  });
  if (!tracked) {
    // The engine failed (and refunded) the task as abandoned before the upstream answered: the
    // upstream's task now runs unbilled, which the operator must hear about.
    log.error({ taskId, upstreamId: submitted.upstreamId }, 'the upstream accepted a task already failed as abandoned; its upstream task is not tracked');
  }
  return (await findTask(store.db, taskId))!;
}
