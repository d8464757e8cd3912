// The channels as the operator's view shows them: what each is configured with and what this
// instance knows of it right now: its connection pool, its circuit breaker and recent figures
// (routing/breaker.ts), per channel and per key. Health is each instance's own view (see
// breaker.ts for why), like the rate limiter's breaker on Redis, shown beside it. Never a key, an
// app id or a URL's path, query or credentials: the origin alone says where calls go, and a key is
// named by its fingerprint (the first 8 hex of its sha256), as in the logs.
import { type ModelConfig, modelRoutes } from '../config/schema.js';
import type { ChannelHealth, ChannelHealthView } from '../routing/breaker.js';
import type { Upstreams } from '../upstreams/pool.js';

export interface ChannelSources {
  /** The channels and models now (routing/table.ts): a reload replaces them. */
  routes: () => { upstreams: Upstreams; models: Record<string, ModelConfig> };
  health: ChannelHealth;
  limiter: { degraded(): boolean };
  /** Whether limits are shared through Redis (else each instance keeps its own). */
  sharedLimits: boolean;
  storeWritable: () => boolean;
}

/** GET /admin/channels, and the operator's switch behind POST /admin/channels/{name}/disable|enable. */
export interface ChannelsAdmin {
  view(): ChannelsView;
  /** The channel's view once disabled or enabled (in force at once); undefined when no channel has that name. */
  setDisabled(name: string, disabled: boolean): ChannelView | undefined;
}

export function channelsAdmin(sources: ChannelSources): ChannelsAdmin {
  return {
    view: () => channelsView(sources),
    setDisabled(name, disabled) {
      if (!sources.health.setDisabled(name, disabled)) return undefined;
      return channelsView(sources).data.find((channel) => channel.name === name);
    },
  };
}

const NO_CALLS: ChannelHealthView = {
  state: 'closed',
  opens_until: null,
  requests: 0,
  error_rate: 0,
  latency_ms: { p50: null, p99: null },
  last_error: null,
  keys: [],
};

function channelsView({ routes, health, limiter, sharedLimits, storeWritable }: ChannelSources) {
  const { upstreams, models } = routes();
  const routed = (channel: string) =>
    Object.entries(models)
      .filter(([, model]) => modelRoutes(model).some((route) => route.channel === channel))
      .map(([id]) => id)
      .sort();
  const now = Date.now();
  return {
    data: upstreams.list().map(({ name, channel, pool }) => ({
      name,
      kind: channel.kind,
      origin: new URL(channel.base_url).origin,
      models: routed(name),
      connections: { limit: channel.connections, in_flight: pool.inFlight, waiting: pool.waiting },
      connection_wait_ms: channel.connection_wait_ms,
      ...(health.view(name, now) ?? NO_CALLS),
    })),
    // All of it is this instance's view: another instance may see the channels, Redis or the store differently.
    rate_limiter: { shared: sharedLimits, degraded: limiter.degraded() },
    store: { writable: storeWritable() },
  };
}

export type ChannelsView = ReturnType<typeof channelsView>;
export type ChannelView = ChannelsView['data'][number];
