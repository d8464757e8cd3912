// A task stays with the channel, and the key, that accepted it: only that upstream knows its id.
// The task row names them (the key by fingerprint, routes.ts); polls and cancels go there.
import type { ResolvedModel } from '../pipeline/types.js';

export interface TaskChannel {
  channel: string | null;
  channel_key: string | null;
}

/**
 * The model as the task's channel and key see it. A task from before channels were recorded, or
 * whose channel has left the configuration, is asked on the model's first channel, as it was
 * before; a key that left the channel is replaced by the channel's first.
 */
export function onTaskChannel(model: ResolvedModel, task: TaskChannel): ResolvedModel {
  const route = model.routes.find((r) => r.channel === task.channel);
  if (!route) return model;
  const upstream = route.keys.find((view) => (view.keyId ?? null) === task.channel_key) ?? route.keys[0]!;
  return { ...model, upstream, upstreamModel: route.upstreamModel };
}
