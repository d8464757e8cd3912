// Which channels a call may try, in order: the lowest priority number first; within a priority, a
// weighted random order (so the first pick follows the weights exactly). Each channel's keys are
// taken in turn from call to call. Health is asked at each attempt, not here (failover.ts): asking
// takes a half-open channel's one probe, which only a call that will really be sent should take.
import type { Upstream } from '../upstreams/pool.js';
import type { ModelRoute } from './routes.js';

export interface Attempt {
  route: ModelRoute;
  /** The channel's view with the key this attempt sends. */
  upstream: Upstream;
}

/** Every (channel, key) a call may try, best first. */
export type Planner = (routes: ModelRoute[]) => Attempt[];

export function createPlanner(random: () => number = Math.random): Planner {
  // Where each channel's key rotation stands; one counter per channel, shared by its models.
  const nextKey = new Map<string, number>();

  function keysInTurn(route: ModelRoute): Upstream[] {
    if (route.keys.length === 1) return route.keys;
    const start = (nextKey.get(route.channel) ?? 0) % route.keys.length;
    nextKey.set(route.channel, start + 1);
    return [...route.keys.slice(start), ...route.keys.slice(0, start)];
  }

  // A model on one channel with one key (the usual case) always has the same plan: made once.
  const fixed = new WeakMap<ModelRoute[], Attempt[]>();
  return (routes) => {
    const only = routes.length === 1 && routes[0]!.keys.length === 1 ? routes[0]! : undefined;
    if (only) {
      let plan = fixed.get(routes);
      if (!plan) fixed.set(routes, (plan = [{ route: only, upstream: only.keys[0]! }]));
      return plan;
    }
    return weightedOrder(routes, random).flatMap((route) => keysInTurn(route).map((upstream) => ({ route, upstream })));
  };
}

/**
 * Math.random without a seed; with one, a small deterministic generator (mulberry32), so a test's
 * run of weighted choices is the same every time.
 */
export function seededRandom(seed: number | undefined): () => number {
  if (seed === undefined) return Math.random;
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * By priority, then within each priority by weighted random sampling without replacement (each
 * route's key is u^(1/weight), largest first: Efraimidis and Spirakis), so a route comes first with
 * probability weight / (sum of its priority's weights).
 */
export function weightedOrder(routes: ModelRoute[], random: () => number): ModelRoute[] {
  if (routes.length === 1) return routes;
  return routes
    .map((route) => ({ route, key: random() ** (1 / route.weight) }))
    .sort((a, b) => a.route.priority - b.route.priority || b.key - a.key)
    .map(({ route }) => route);
}
