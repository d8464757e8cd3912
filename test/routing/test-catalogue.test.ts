// The test catalogue (routing/test-catalogue.ts): every live model id resolves on a sandbox channel
// of its type at its live price, no live channel is reachable from it, and it follows reloads.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildConfig } from '../../src/config/load.js';
import { MODEL_TYPES } from '../../src/config/schema.js';
import type { GatewayError } from '../../src/errors.js';
import { createRouteHealth } from '../../src/routing/breaker.js';
import { breakerSettings, buildRoutes, createRoutingTable } from '../../src/routing/table.js';

const SANDBOX = 'http://127.0.0.1:9/';

const live = (extra: Record<string, unknown> = {}) =>
  buildConfig({
    channels: {
      oai: { kind: 'openai', base_url: 'https://api.example.com/v1', api_key: 'sk-real' },
      claude: { kind: 'anthropic', base_url: 'https://claude.example.com', api_key: 'sk-real' },
      ark: { kind: 'ark', base_url: 'https://ark.example.com', api_key: 'sk-real' },
    },
    models: {
      gpt: { type: 'chat', channels: [{ channel: 'oai' }, { channel: 'claude', upstream_model: 'other' }], price: { input_token: 7, output_token: 9 } },
      opus: { type: 'chat', channel: 'claude', price: { input_token: 1 } },
      painter: { type: 'image', channel: 'oai', price: { image: 55 } },
      director: { type: 'video', channel: 'ark', price: { second: 3 }, max_video_seconds: 9 },
      ...extra,
    },
  }).config;

test('every live model is cloned onto the sandbox channel of its type, with its price, under the sandbox’s model name', () => {
  const { testCatalogue } = buildRoutes(live(), undefined, undefined, SANDBOX);
  const seen = (id: string, type: 'chat' | 'image' | 'video') => {
    const model = testCatalogue.resolve(id, type);
    return {
      channels: model.routes.map((route) => route.channel),
      upstreamModel: model.upstreamModel,
      price: model.config.price,
      base: model.upstream.channel.base_url,
    };
  };
  assert.deepEqual(seen('gpt', 'chat'), {
    channels: ['test:sandbox-openai'],
    upstreamModel: 'sandbox-chat',
    price: { input_token: 7, output_token: 9 },
    base: 'http://127.0.0.1:9',
  });
  assert.deepEqual(seen('opus', 'chat').channels, ['test:sandbox-anthropic'], 'a model on an Anthropic channel gets the Anthropic sandbox');
  assert.deepEqual(seen('painter', 'image').upstreamModel, 'sandbox-image');
  assert.equal(testCatalogue.resolve('director', 'video').config.max_video_seconds, 9, 'the live model’s settings come along');
  assert.throws(
    () => testCatalogue.resolve('painter', 'chat'),
    (error: GatewayError) => error.status === 400,
  );
});

test('no model of the test catalogue reaches anything but the sandbox, whatever the live configuration', () => {
  const { testCatalogue } = buildRoutes(live(), undefined, undefined, SANDBOX);
  const all = MODEL_TYPES.flatMap((type) => testCatalogue.list(type).map((model) => testCatalogue.resolve(model.id, type)));
  assert.ok(all.length > 12);
  for (const model of all) {
    for (const route of model.routes) {
      assert.match(route.channel, /^test:sandbox-/, model.id);
      for (const key of route.keys) assert.equal(new URL(key.channel.base_url).origin, 'http://127.0.0.1:9', model.id);
    }
  }
});

test('without a sandbox URL a test key’s model is refused with 503, and the live catalogue is as before', () => {
  const routes = buildRoutes(live());
  assert.throws(
    () => routes.testCatalogue.resolve('gpt', 'chat'),
    (error: GatewayError) => error.status === 503 && error.message === 'test mode is not available on this gateway',
  );
  assert.equal(routes.catalogue.resolve('gpt', 'chat').upstream.channel.base_url, 'https://api.example.com/v1');
});

test('a reload rebuilds the test catalogue on the same sandbox, keeping its pools', async () => {
  const first = live();
  const table = createRoutingTable(buildRoutes(first, undefined, undefined, SANDBOX), {
    health: createRouteHealth(breakerSettings(first)),
    retireAfterMs: 10,
  });
  const before = table.current();
  assert.throws(() => table.testCatalogue.resolve('added', 'chat'));
  table.replace(buildRoutes(live({ added: { type: 'chat', channel: 'oai' } }), undefined, before));
  assert.equal(table.testCatalogue.resolve('added', 'chat').routes[0]!.channel, 'test:sandbox-openai');
  assert.equal(table.current().testUpstreams!.get('test:sandbox-openai').pool, before.testUpstreams!.get('test:sandbox-openai').pool);
  await table.close();
});
