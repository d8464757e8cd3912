// The routing table (routing/table.ts): a reload's generation keeps the pools of channels it leaves
// as they were, and a pool it no longer uses stays open until no call can need it, then closes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildConfig } from '../../src/config/load.js';
import { createRouteHealth } from '../../src/routing/breaker.js';
import { breakerSettings, buildRoutes, createRoutingTable } from '../../src/routing/table.js';

const configWith = (connections: number) =>
  buildConfig({
    channels: {
      steady: { kind: 'openai', base_url: 'http://127.0.0.1:9/a' },
      changing: { kind: 'openai', base_url: 'http://127.0.0.1:9/b', connections },
    },
    models: { one: { type: 'chat', channel: 'steady' }, two: { type: 'chat', channel: 'changing' } },
  }).config;

test('a reload keeps the pool of an unchanged channel and closes a replaced one only after the retirement delay', async () => {
  const first = configWith(10);
  const table = createRoutingTable(buildRoutes(first), { health: createRouteHealth(breakerSettings(first)), retireAfterMs: 100 });
  const before = table.current();
  const resolvedBefore = table.catalogue.resolve('two', 'chat');

  table.replace(buildRoutes(configWith(20), undefined, before));
  const now = table.current();
  assert.equal(now.upstreams.get('steady').pool, before.upstreams.get('steady').pool);
  assert.notEqual(now.upstreams.get('changing').pool, before.upstreams.get('changing').pool);
  assert.equal(table.catalogue.resolve('two', 'chat').upstream.channel.connections, 20, 'new calls resolve on the new generation');
  assert.equal(resolvedBefore.upstream.channel.connections, 10, 'a call that resolved before keeps its own');

  const retired = before.upstreams.get('changing').pool;
  assert.equal(retired.closed, false, 'still open for the calls that started on it');
  await new Promise((resolve) => setTimeout(resolve, 150));
  assert.equal(retired.closed, true);
  assert.equal(now.upstreams.get('steady').pool.closed, false);
  await table.close();
});

test('a reload drops the health of a removed channel and keeps that of one that stays', () => {
  const health = createRouteHealth({ ...breakerSettings(configWith(10)), failuresToOpen: 1 });
  health.failed({ channel: 'steady', keyId: null }, { kind: 'unreachable' }, Date.now());
  health.reconfigure(breakerSettings(buildConfig({ channels: { steady: { kind: 'openai', base_url: 'http://127.0.0.1:9/a' } } }).config));
  assert.equal(health.view('steady')?.state, 'open');
  assert.equal(health.view('changing'), undefined);
  // A call still on the removed channel reports in without bringing it back.
  health.succeeded({ channel: 'changing', keyId: null }, 5, Date.now());
  assert.deepEqual(
    health.states().map((s) => s.channel),
    ['steady'],
  );
});
