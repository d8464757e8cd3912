// The gateway's node flags (src/cli/node-flags.ts) on every way it is launched as shipped: npm
// start, the tollroute command, and the bench, which measures the gateway as it ships. (The
// Dockerfile and compose.yaml: test/deploy/deploy-files.test.ts.)
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { compareNodeArgs } from '../../bench/compare.js';
import { gatewayNodeArgs } from '../../bench/targets.js';
import { GATEWAY_NODE_FLAGS } from '../../src/cli/node-flags.js';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

describe('the gateway node flags', () => {
  test('are node options that node itself accepts', () => {
    assert.ok(GATEWAY_NODE_FLAGS.length > 0);
    for (const flag of GATEWAY_NODE_FLAGS) assert.ok(process.allowedNodeEnvironmentFlags.has(flag.split('=')[0]!), `${flag} is not a node option`);
  });

  test('npm start gives them to node before the gateway', () => {
    const start: string = JSON.parse(read('package.json')).scripts.start;
    assert.equal(start, `exec node ${GATEWAY_NODE_FLAGS.join(' ')} dist/main.js serve`);
  });

  test('the tollroute command gives them to node on its first line', () => {
    const shebang = read('src/main.ts').split('\n')[0];
    assert.equal(shebang, `#!/usr/bin/env -S node ${GATEWAY_NODE_FLAGS.join(' ')}`);
  });

  test('the bench starts the gateway with them, then with BENCH_GATEWAY_NODE_ARGS', () => {
    assert.deepEqual(gatewayNodeArgs({ BENCH_GATEWAY_NODE_ARGS: '--cpu-prof  --cpu-prof-dir=/tmp/p' }), [
      ...GATEWAY_NODE_FLAGS,
      '--cpu-prof',
      '--cpu-prof-dir=/tmp/p',
    ]);
    assert.deepEqual(gatewayNodeArgs({}), [...GATEWAY_NODE_FLAGS]);
  });

  test('a comparison gives BENCH_AFTER_NODE_ARGS to the gateway built from the working tree only', () => {
    const env = { BENCH_GATEWAY_NODE_ARGS: '--trace-gc', BENCH_AFTER_NODE_ARGS: '--use-largepages=on' };
    assert.deepEqual(compareNodeArgs('after', env), [...GATEWAY_NODE_FLAGS, '--trace-gc', '--use-largepages=on']);
    assert.deepEqual(compareNodeArgs('before', env), [...GATEWAY_NODE_FLAGS, '--trace-gc']);
  });
});
