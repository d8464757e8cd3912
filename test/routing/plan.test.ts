// Planning a call's attempts: priorities first, weights within a priority, keys in turn.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createPlanner, seededRandom, weightedOrder } from '../../src/routing/plan.js';
import type { ModelRoute } from '../../src/routing/routes.js';
import type { Upstream } from '../../src/upstreams/pool.js';

const view = (channel: string, keyId: string | null) => ({ name: channel, keyId }) as unknown as Upstream;
const route = (channel: string, priority: number, weight: number, keys: (string | null)[] = [null]): ModelRoute => ({
  channel,
  upstreamModel: 'm',
  priority,
  weight,
  keys: keys.map((key) => view(channel, key)),
});

test('a lower priority number always comes first, whatever the weights', () => {
  const random = seededRandom(1);
  for (let i = 0; i < 200; i++) {
    const order = weightedOrder([route('backup', 1, 100), route('main', 0, 1)], random).map((r) => r.channel);
    assert.deepEqual(order, ['main', 'backup']);
  }
});

test('within a priority the first pick follows the weights: 3:1 gives 75 % ± 2 % over 20 000 calls', () => {
  const random = seededRandom(20261122);
  const routes = [route('heavy', 0, 3), route('light', 0, 1)];
  let heavyFirst = 0;
  const calls = 20_000;
  for (let i = 0; i < calls; i++) if (weightedOrder(routes, random)[0]!.channel === 'heavy') heavyFirst++;
  const share = heavyFirst / calls;
  assert.ok(Math.abs(share - 0.75) <= 0.02, `heavy first in ${(share * 100).toFixed(1)} % of calls`);
});

test('three weights 5:3:2 are each picked first in their share ± 2 %', () => {
  const random = seededRandom(7);
  const routes = [route('a', 0, 5), route('b', 0, 3), route('c', 0, 2)];
  const firsts = { a: 0, b: 0, c: 0 } as Record<string, number>;
  for (let i = 0; i < 20_000; i++) firsts[weightedOrder(routes, random)[0]!.channel]!++;
  for (const [channel, expected] of Object.entries({ a: 0.5, b: 0.3, c: 0.2 })) {
    assert.ok(Math.abs(firsts[channel]! / 20_000 - expected) <= 0.02, `${channel}: ${firsts[channel]}`);
  }
});

test('a seeded generator gives the same order every run', () => {
  const routes = [route('a', 0, 1), route('b', 0, 1), route('c', 0, 1)];
  const run = () => {
    const random = seededRandom(42);
    return Array.from({ length: 10 }, () =>
      weightedOrder(routes, random)
        .map((r) => r.channel)
        .join(''),
    );
  };
  assert.deepEqual(run(), run());
});

test('each channel’s keys are taken in turn from call to call, every key planned after the first', () => {
  const plan = createPlanner(seededRandom(3));
  const routes = [route('a', 0, 1, ['k1', 'k2', 'k3']), route('b', 1, 1, ['kb'])];
  const plans = Array.from({ length: 4 }, () => plan(routes).map((a) => `${a.route.channel}:${a.upstream.keyId}`));
  assert.deepEqual(plans, [
    ['a:k1', 'a:k2', 'a:k3', 'b:kb'],
    ['a:k2', 'a:k3', 'a:k1', 'b:kb'],
    ['a:k3', 'a:k1', 'a:k2', 'b:kb'],
    ['a:k1', 'a:k2', 'a:k3', 'b:kb'],
  ]);
});
