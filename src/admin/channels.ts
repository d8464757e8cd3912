// The channels as the operator's view shows them: what each is configured with and what this
// instance knows of it right now. The gateway keeps no per-channel health or breaker: a failing
// upstream fails its calls (released, never billed) and nothing more. What does live in memory is
// each channel's connection pool (calls on the wire, calls waiting for a connection) and the rate
// limiter's breaker on Redis, so those are what is shown. Never a key, an app id or a URL's path,
// query or credentials: the origin alone says where calls go.
import { type ModelConfig, modelRoutes } from '../config/schema.js';
import type { Upstreams } from '../upstreams/pool.js';

export interface ChannelSources {
  upstreams: Upstreams;
  models: Record<string, ModelConfig>;
  limiter: { degraded(): boolean };
  /** Whether limits are shared through Redis (else each instance keeps its own). */
  sharedLimits: boolean;
  storeWritable: () => boolean;
}

export function channelsView({ upstreams, models, limiter, sharedLimits, storeWritable }: ChannelSources) {
  const routed = (channel: string) =>
    Object.entries(models)
      .filter(([, model]) => modelRoutes(model).some((route) => route.channel === channel))
      .map(([id]) => id)
      .sort();
  return {
    data: upstreams.list().map(({ name, channel, pool }) => ({
      name,
      kind: channel.kind,
      origin: new URL(channel.base_url).origin,
      models: routed(name),
      connections: { limit: channel.connections, in_flight: pool.inFlight, waiting: pool.waiting },
      connection_wait_ms: channel.connection_wait_ms,
    })),
    // Both are this instance's view: another instance may see Redis or the store differently.
    rate_limiter: { shared: sharedLimits, degraded: limiter.degraded() },
    store: { writable: storeWritable() },
  };
}

export type ChannelsView = ReturnType<typeof channelsView>;
