// An Idempotency-Key replay is answered from the store, without running the call; it is still
// admitted as a fresh call of the same request would be, by the key that replays it: the models
// that key may use and its rate limit. Otherwise a key limited to one model (or slowed down) could
// read another key's answers of the account, and replay them as fast as it likes.
import { requireModelAllowed } from '../billing/key-limits.js';
import type { ModelType } from '../config/schema.js';
import type { PipelineLogger } from './hold-ending.js';
import type { Pipeline } from './metered-call.js';
import type { Caller } from './types.js';

export async function admitReplay(
  pipeline: Pipeline,
  {
    caller,
    modelId,
    modelType,
    rateLimited = true,
  }: {
    caller: Caller;
    modelId: string | undefined;
    modelType: ModelType;
    /** False where the route already took the rate limit before reading the body (uploads). */
    rateLimited?: boolean;
  },
  log: PipelineLogger,
): Promise<void> {
  // Only a key with an allow-list has a model to check: the others skip the catalogue.
  if (caller.limits?.allowedModels) {
    const model = pipeline.catalogueFor(caller.livemode).resolve(modelId, modelType);
    requireModelAllowed(caller.limits, modelId, model.id);
  }
  if (rateLimited) await pipeline.admit(caller, log);
}
