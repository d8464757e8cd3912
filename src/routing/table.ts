// The routing table: the channels, models and routing settings calls are served on, replaced whole
// by a reload (SIGHUP, POST /admin/reload; admin/reload.ts).
//
// A call reads the table once, at its start: the ResolvedModel it gets holds its own channels'
// pools and its model's config (prices included), so a call in flight finishes on the
// configuration it started with, however many reloads happen meanwhile. Task polls resolve their
// model again on every poll, so they follow the table (routing/task-channel.ts).
import { type Config, channelKeys, type ModelConfig } from '../config/schema.js';
import { type Catalogue, createCatalogue } from '../pipeline/catalogue.js';
import type { Routing } from '../pipeline/metered-call.js';
import { type ConnectionWaitObserver, createUpstreams, type Upstreams } from '../upstreams/pool.js';
import type { WaitBoundedPool } from '../upstreams/wait-bounded-pool.js';
import type { BreakerOptions, ChannelHealth } from './breaker.js';
import { createPlanner, type Planner, seededRandom } from './plan.js';
import { keyFingerprint } from './routes.js';
import { testModeConfig, unavailableTestCatalogue } from './test-catalogue.js';

/** The parts of the configuration a reload applies; the rest needs a restart. */
export type RoutingConfig = Pick<Config, 'channels' | 'models' | 'routing'>;
export const RELOADABLE_SECTIONS = ['channels', 'models', 'routing'] as const;

/** One generation of the table. */
export interface Routes {
  models: Record<string, ModelConfig>;
  upstreams: Upstreams;
  catalogue: Catalogue;
  plan: Planner;
  maxAttempts: number;
  /** Test keys' catalogue (routing/test-catalogue.ts): the sandbox alone; refuses every call without a sandbox URL. */
  testCatalogue: Catalogue;
  /** The sandbox's channels, when test mode is available. */
  testUpstreams?: Upstreams;
  /** Where test keys' calls go; a reload keeps it (it is not part of the file's reloadable sections). */
  testSandboxUrl?: string;
}

/**
 * A generation built from `config`; channels unchanged since `previous` keep their pools. The
 * test catalogue is rebuilt with it, since it clones every live model id.
 */
export function buildRoutes(config: RoutingConfig, observer?: ConnectionWaitObserver, previous?: Routes, testSandboxUrl = previous?.testSandboxUrl): Routes {
  const upstreams = createUpstreams(config.channels, observer, previous?.upstreams);
  const routes: Routes = {
    models: config.models,
    upstreams,
    catalogue: createCatalogue(config.models, upstreams),
    plan: createPlanner(seededRandom(config.routing.seed)),
    maxAttempts: config.routing.max_attempts,
    testCatalogue: unavailableTestCatalogue,
  };
  if (testSandboxUrl === undefined) return routes;
  const test = testModeConfig(testSandboxUrl, config);
  const testUpstreams = createUpstreams(test.channels, observer, previous?.testUpstreams);
  return { ...routes, testSandboxUrl, testUpstreams, testCatalogue: createCatalogue(test.models, testUpstreams) };
}

const pools = (routes: Routes) => [...routes.upstreams.list(), ...(routes.testUpstreams?.list() ?? [])].map((upstream) => upstream.pool);

/** The breaker's settings and each channel's keys (by fingerprint), at start and on every reload. */
export function breakerSettings(config: RoutingConfig): Omit<BreakerOptions, 'observer'> {
  return {
    trips: config.routing.circuit_breaker,
    failuresToOpen: config.routing.failures_to_open,
    cooldownMs: config.routing.cooldown_ms,
    maxCooldownMs: config.routing.max_cooldown_ms,
    rateLimitRestMs: config.routing.rate_limit_rest_ms,
    channels: Object.fromEntries(Object.entries(config.channels).map(([name, channel]) => [name, channelKeys(channel).map(keyFingerprint)])),
  };
}

export interface RoutingTable {
  current(): Routes;
  /** From now on calls start on `next`; pools it no longer uses are closed once no call can need them. */
  replace(next: Routes): void;
  /** A Catalogue that resolves on the current generation: what the pipeline, the task engine and the routes read. */
  readonly catalogue: Catalogue;
  /** The same for test keys: the current generation's test catalogue. */
  readonly testCatalogue: Catalogue;
  /** The pipeline's routing: the current generation's planner and attempt limit, and the health kept across reloads. */
  readonly routing: Routing;
  /** Closes every pool, retired ones included (undici's close waits for the requests on them). */
  close(): Promise<void>;
}

/**
 * `retireAfterMs` is how long a pool a reload left stays open: no metered call outlives
 * request_timeout_ms, so after that none started before the reload can send on it again. Its
 * close() then still waits for any request on the wire (undici's Pool.close is graceful), so
 * nothing is cut; counting calls per generation would say the same sooner, at the price of a
 * release in every path that holds a model.
 */
export function createRoutingTable(first: Routes, { health, retireAfterMs }: { health: ChannelHealth; retireAfterMs: number }): RoutingTable {
  let routes = first;
  const retiring = new Map<WaitBoundedPool, NodeJS.Timeout>();

  const retire = (pool: WaitBoundedPool) => {
    const timer = setTimeout(() => {
      retiring.delete(pool);
      pool.close().catch(() => {}); // already closed by a shutdown: nothing left to do
    }, retireAfterMs);
    timer.unref(); // a retired pool never keeps the process up
    retiring.set(pool, timer);
  };

  return {
    current: () => routes,
    replace(next) {
      const kept = new Set(pools(next));
      for (const pool of pools(routes)) if (!kept.has(pool)) retire(pool);
      routes = next;
    },
    catalogue: {
      resolve: (id, type) => routes.catalogue.resolve(id, type),
      list: (type) => routes.catalogue.list(type),
    },
    testCatalogue: {
      resolve: (id, type) => routes.testCatalogue.resolve(id, type),
      list: (type) => routes.testCatalogue.list(type),
    },
    routing: {
      plan: (modelRoutes) => routes.plan(modelRoutes),
      health,
      // Read once per call, at its start, like the rest of the table.
      get maxAttempts() {
        return routes.maxAttempts;
      },
    },
    async close() {
      for (const timer of retiring.values()) clearTimeout(timer);
      const retired = [...retiring.keys()];
      retiring.clear();
      await Promise.allSettled([routes.upstreams.close(), routes.testUpstreams?.close(), ...retired.map((pool) => pool.close())]);
    },
  };
}
