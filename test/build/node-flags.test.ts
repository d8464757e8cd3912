// The node flags the gateway ships with (src/node-flags.ts): `npm start` passes exactly them, and
// they do what they are there for.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { GATEWAY_NODE_FLAGS } from '../../src/node-flags.js';

const packageJson = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> };

test('npm start runs the gateway with the node flags the bench measures it with', () => {
  assert.equal(packageJson.scripts.start, `node ${GATEWAY_NODE_FLAGS.join(' ')} dist/main.js serve`);
});

test("the gateway's flags give node a young generation of two 32 MiB semi-spaces, larger than the default", () => {
  // Allocates enough short-lived objects for the young generation to grow to its limit, then reports it.
  const program = `
    let keep = [];
    for (let i = 0; i < 4e6; i++) { keep.push({ i, s: 'x' + i }); if (keep.length > 20000) keep = []; }
    const space = require('node:v8').getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
    console.log(space.space_size);`;
  const newSpaceBytes = (args: readonly string[]) => {
    const run = spawnSync(process.execPath, [...args, '-e', program], { encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    return Number(run.stdout.trim());
  };
  const byDefault = newSpaceBytes([]);
  const withFlags = newSpaceBytes(GATEWAY_NODE_FLAGS);
  assert.equal(withFlags, 2 * 32 * 1024 * 1024, `new space with the flags: ${withFlags} bytes`);
  assert.ok(withFlags > byDefault, `new space: ${withFlags} bytes with the flags, ${byDefault} without`);
});
