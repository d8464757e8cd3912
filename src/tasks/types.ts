// What each kind of asynchronous task plugs into the task engine: how to create it upstream,
// how to ask after it, and what its webhook says.
import type { Units } from '../billing/prices.js';
import type { ResolvedModel } from '../pipeline/types.js';
import type { TaskKind } from '../store/schema.js';
import type { TaskRow } from '../store/tasks.js';

export interface TaskError {
  code: string;
  message: string;
}

export interface NewAsset {
  kind: 'image' | 'video';
  url: string;
  sourceTaskId?: string | null;
}

export type PollOutcome =
  | { state: 'running'; status: 'queued' | 'processing'; upstreamRecord?: unknown }
  | {
      state: 'succeeded';
      /** What the task's GET shows as `result`. */
      result: unknown;
      units: Units;
      upstreamRecord?: unknown;
      assets?: NewAsset[];
      /** Fields the success webhook adds to the common ones (video_url, result_url…). */
      webhook?: Record<string, unknown>;
    }
  | { state: 'failed'; error: TaskError; upstreamRecord?: unknown; webhook?: Record<string, unknown> };

export interface PollContext {
  signal: AbortSignal;
  /**
   * Call right before asking the upstream for paid work that a repeat would pay for again (an
   * image generated inside a poll, a summary written): it counts the attempt durably and shows the
   * task as `processing`. The engine allows `tasks.max_generation_attempts` of them per task, crashes
   * included; a poll that only asks how a task is doing never calls it. Throws when the lease is lost.
   */
  startGeneration(): Promise<void>;
}

export interface TaskKindHandler {
  kind: TaskKind;
  /** `task_type` in webhook payloads. */
  webhookType: 'video' | 'erase_subtitle' | 'minutes' | 'image';
  /**
   * Creates the upstream task; a kind the engine runs itself (images) returns a null id. Called
   * once per task and never repeated: a throw fails the task and releases its hold.
   */
  submit(task: TaskRow, model: ResolvedModel, signal: AbortSignal): Promise<{ upstreamId: string | null; upstreamRecord?: unknown }>;
  /**
   * Asks after the task (or, for images, does it). A throw means "no answer this time": the engine
   * asks again after a backoff, until the task timeout or, once startGeneration was called, until
   * the generation attempts run out; either way the task then fails and its hold is released.
   */
  poll(task: TaskRow, model: ResolvedModel, context: PollContext): Promise<PollOutcome>;
  /**
   * Set for a kind whose every call leaves a consumption record, failed ones included (subtitle
   * erase, spec 4.5): a failed task then ends its hold with a charge of 0 and a usage row of these
   * units, flagged `failed`, instead of a release with no record. The caller still pays nothing.
   */
  failedUseUnits?: Record<string, number>;
}
