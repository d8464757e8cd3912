// A gateway loads the packages of an optional part only where that part is used: Stripe's SDK where
// card top-ups are configured, the Redis client where limits are shared through Redis, the media
// library on the first recording it reads. Each costs a tenth of a second or more at every start
// (of the gateway and of every test process that starts one).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import module from 'node:module';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const LOAD_TYPESCRIPT = fileURLToPath(new URL('../load-typescript.mjs', import.meta.url));
const GATEWAY_HELPER = new URL('../helpers/gateway.ts', import.meta.url).href;

// A child process starts a test gateway (with `overrides`) and prints the packages it resolved.
const CHILD = `
import module from 'node:module';
const packages = new Set();
module.registerHooks({
  resolve(specifier, context, next) {
    const resolved = next(specifier, context);
    const name = resolved.url.match(/node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//)?.[1];
    if (name) packages.add(name);
    return resolved;
  },
});
const { startTestGateway } = await import(${JSON.stringify(GATEWAY_HELPER)});
const gateway = await startTestGateway(JSON.parse(process.env.OVERRIDES));
await gateway.close();
console.log(JSON.stringify([...packages]));
`;

function packagesLoadedBy(overrides: object): string[] {
  const out = execFileSync(process.execPath, ['--import', LOAD_TYPESCRIPT, '--input-type=module', '--eval', CHILD], {
    env: { ...process.env, OVERRIDES: JSON.stringify(overrides) },
    encoding: 'utf8',
  });
  return JSON.parse(out.trim().split('\n').at(-1)!);
}

// Redis on a closed port: the client is made, and only its takes would fail.
const STRIPE_AND_REDIS = { stripe: { secret_key: 'sk_test_startup', webhook_secret: 'whsec_startup' }, limits: { redis: 'redis://127.0.0.1:1' } };
const skip = typeof module.registerHooks !== 'function' && 'module.registerHooks is Node 22.15+';

test('a gateway without card top-ups or Redis starts without loading Stripe’s SDK, the Redis client or the media library', { skip }, () => {
  const loaded = packagesLoadedBy({});
  assert.ok(loaded.includes('fastify'), `the child reports what it loaded: ${loaded}`);
  assert.ok(!loaded.includes('stripe'), 'stripe is loaded');
  assert.ok(!loaded.includes('ioredis'), 'ioredis is loaded');
  assert.ok(!loaded.includes('music-metadata'), 'music-metadata is loaded');
});

test('a gateway with card top-ups and Redis loads Stripe’s SDK and the Redis client as it starts', { skip }, () => {
  const loaded = packagesLoadedBy(STRIPE_AND_REDIS);
  assert.ok(loaded.includes('stripe'), 'stripe is not loaded');
  assert.ok(loaded.includes('ioredis'), 'ioredis is not loaded');
});
