import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { boundHeapGrowth } from '../../src/cli/heap-growth.js';
import { LOAD_TYPESCRIPT } from '../helpers/processes.js';

const run = promisify(execFile);
const script = fileURLToPath(new URL('./heap-growth-run.ts', import.meta.url));
const collect = async (mode: 'bound' | 'default') => {
  const { stdout } = await run(process.execPath, ['--import', LOAD_TYPESCRIPT, script, mode], { env: { ...process.env, NODE_OPTIONS: '' } });
  return JSON.parse(stdout) as { fullCollections: number; peakMb: number };
};

test('with the growth bound, promoted garbage is collected far sooner: more full collections, a lower peak', async () => {
  const [unbound, bound] = await Promise.all([collect('default'), collect('bound')]);
  assert.ok(bound.fullCollections >= 2 * Math.max(1, unbound.fullCollections), JSON.stringify({ unbound, bound }));
  assert.ok(bound.peakMb < unbound.peakMb * 0.8, JSON.stringify({ unbound, bound }));
});

test('a growth given to node itself, on its command line or in NODE_OPTIONS, is left as it is', () => {
  assert.equal(boundHeapGrowth(['--heap-growing-percent=50'], ''), false);
  assert.equal(boundHeapGrowth([], '--max-old-space-size=4096 --heap_growing_percent=10'), false);
});
