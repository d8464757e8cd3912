// What each kind of asynchronous task plugs into the task engine: how to create it upstream,
// how to ask after it, and what its webhook says.
import type { Units } from '../billing/prices.js';
import type { ResolvedModel } from '../pipeline/types.js';
import type { TaskRow } from '../store/tasks.js';
import type { TaskKind } from '../store/schema.js';

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
  /** Shows `processing` on the task while a long upstream call runs (images are generated inside a poll). */
  markProcessing(): Promise<void>;
}

export interface TaskKindHandler {
  kind: TaskKind;
  /** `task_type` in webhook payloads. */
  webhookType: 'video' | 'erase_subtitle' | 'minutes' | 'image';
  /** Creates the upstream task; a kind the engine runs itself (images) returns a null id. */
  submit(task: TaskRow, model: ResolvedModel, signal: AbortSignal): Promise<{ upstreamId: string | null; upstreamRecord?: unknown }>;
  poll(task: TaskRow, model: ResolvedModel, context: PollContext): Promise<PollOutcome>;
}
