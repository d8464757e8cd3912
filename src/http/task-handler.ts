// Fastify's side of asynchronous tasks: creation (validate → submitTask → the kind's view, with
// Idempotency-Key) and reads (rate-limited, the account's own tasks only).
import type { FastifyRequest, RouteHandlerMethod } from 'fastify';
import type { Units } from '../billing/prices.js';
import { invalidRequest, notFound } from '../errors.js';
import { checkUrlTarget } from '../net/url-policy.js';
import type { Pipeline } from '../pipeline/metered-call.js';
import { admitReplay } from '../pipeline/replay-admission.js';
import type { ResolvedModel } from '../pipeline/types.js';
import type { Store } from '../store/open.js';
import type { TaskKind } from '../store/schema.js';
import { findAccountTask, type TaskRow } from '../store/tasks.js';
import { MODEL_TYPE_OF_KIND } from '../tasks/engine.js';
import { type SubmitDeps, submitTask } from '../tasks/submit.js';
import { requireCaller } from './auth.js';
import { runIdempotent } from './idempotency.js';

export interface TaskRouteDeps {
  store: Store;
  pipeline: Pipeline;
  submit: SubmitDeps;
  allowPrivateUrls: boolean;
  /** This gateway's own address: files it serves may be handed to upstreams as file_url. */
  publicUrl: string;
}

export interface TaskCreateSpec<Normalised> {
  kind: TaskKind;
  /** Validates and fills defaults; throws a 400 naming the field. May look at the store (erase checks its source video). */
  normalise(body: unknown, request: FastifyRequest): Normalised | Promise<Normalised>;
  modelOf(request: Normalised): string | undefined;
  callbackUrlOf(request: Normalised): string | undefined | null;
  estimate(request: Normalised, model: ResolvedModel): Units;
  view(task: TaskRow): unknown;
}

/**
 * callback_url and file_url: http(s), no credentials, and no private, loopback or link-local
 * target (by address, or by what the name resolves to) unless the operator allows them.
 */
export async function requireSafeUrl(url: string | undefined | null, field: string, allowPrivate: boolean): Promise<void> {
  if (url === undefined || url === null) return;
  const problem = await checkUrlTarget(url, { field, allowPrivate });
  if (problem) throw invalidRequest(problem);
}

export function taskCreateHandler<Normalised>(deps: TaskRouteDeps, spec: TaskCreateSpec<Normalised>): RouteHandlerMethod {
  return async function createTask(request, reply) {
    const caller = requireCaller(request);
    // No abort when the caller leaves: a submission runs to its end so the upstream's task is
    // tracked and billed, not orphaned; the caller that left simply gets no answer.
    // A replay is admitted as this creation would be: its model read the same way, then the rate limit.
    const admitReplayed = async () => {
      const modelId = spec.modelOf(await spec.normalise(request.body, request));
      await admitReplay(deps.pipeline, { caller, modelId, modelType: MODEL_TYPE_OF_KIND[spec.kind] }, request.log);
    };
    const idempotency = { store: deps.store, instanceId: deps.pipeline.instanceId, admitReplay: admitReplayed };
    return runIdempotent(idempotency, request, reply, async () => {
      const normalised = await spec.normalise(request.body, request);
      const callbackUrl = spec.callbackUrlOf(normalised);
      await requireSafeUrl(callbackUrl, 'callback_url', deps.allowPrivateUrls);
      const task = await submitTask(
        deps.submit,
        {
          kind: spec.kind,
          caller,
          modelId: spec.modelOf(normalised),
          request: normalised,
          estimate: (model) => spec.estimate(normalised, model),
          callbackUrl,
          requestId: request.id,
          clientRequestId: request.clientRequestId,
        },
        request.log,
      );
      return { statusCode: 200, body: spec.view(task) };
    });
  };
}

/** The caller's task named by `:taskId` (ours or the upstream's id), rate-limited like any call. */
export async function callerTask(deps: TaskRouteDeps, request: FastifyRequest, kind: TaskKind): Promise<TaskRow> {
  const caller = requireCaller(request);
  await deps.pipeline.admit(caller, request.log);
  const { taskId } = request.params as { taskId: string };
  const task = await findAccountTask(deps.store.db, { accountId: caller.accountId, kind, id: taskId });
  // Another account's task is answered exactly like a missing one.
  if (!task) throw notFound(`task ${taskId} not found`);
  return task;
}

export function taskReadHandler(deps: TaskRouteDeps, { kind, view }: { kind: TaskKind; view(task: TaskRow): unknown }): RouteHandlerMethod {
  return async function readTask(request) {
    return view(await callerTask(deps, request, kind));
  };
}
