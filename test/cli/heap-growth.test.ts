import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { boundHeapGrowth, HEAP_GROWING_PERCENT, heapGrowingPercent, MIN_HEAP_GROWTH_BYTES } from '../../src/cli/heap-growth.js';
import { LOAD_TYPESCRIPT } from '../helpers/processes.js';

const run = promisify(execFile);
const script = fileURLToPath(new URL('./heap-growth-run.ts', import.meta.url));
const collect = async (mode: 'bound' | 'thirty' | 'default') => {
  const { stdout } = await run(process.execPath, ['--import', LOAD_TYPESCRIPT, script, mode], { env: { ...process.env, NODE_OPTIONS: '' } });
  return JSON.parse(stdout) as { fullCollections: number; peakMb: number };
};
const MiB = 1024 * 1024;

test('a large heap may grow by 30 % between full collections', () => {
  assert.equal(heapGrowingPercent(2048 * MiB), HEAP_GROWING_PERCENT);
  assert.equal(heapGrowingPercent(400 * MiB), 32); // 128 MiB is 32 % of 400
});

test('a small heap may grow by 128 MiB between full collections, however little 30 % of it is', () => {
  assert.equal(heapGrowingPercent(64 * MiB), 200);
  assert.equal(heapGrowingPercent(60 * MiB) * 60 * MiB >= MIN_HEAP_GROWTH_BYTES * 100, true);
  assert.equal(heapGrowingPercent(0), heapGrowingPercent(1));
});

test('with growth of 30 %, promoted garbage is collected far sooner: more full collections, a lower peak', async () => {
  const [unbound, thirty] = await Promise.all([collect('default'), collect('thirty')]);
  assert.ok(thirty.fullCollections >= 2 * Math.max(1, unbound.fullCollections), JSON.stringify({ unbound, thirty }));
  assert.ok(thirty.peakMb < unbound.peakMb * 0.8, JSON.stringify({ unbound, thirty }));
});

test('a heap smaller than the room of 128 MiB is not collected in full as often as 30 % growth would', async () => {
  const [bound, thirty] = await Promise.all([collect('bound'), collect('thirty')]);
  assert.ok(bound.fullCollections * 3 <= thirty.fullCollections * 2, JSON.stringify({ bound, thirty }));
});

test('a growth given to node itself, on its command line or in NODE_OPTIONS, is left as it is', () => {
  assert.equal(boundHeapGrowth({ execArgv: ['--heap-growing-percent=50'], nodeOptions: '' }), false);
  assert.equal(boundHeapGrowth({ execArgv: [], nodeOptions: '--max-old-space-size=4096 --heap_growing_percent=10' }), false);
});
