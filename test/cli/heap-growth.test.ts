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
  return JSON.parse(stdout) as { fullCollections: number; lateFullCollections: number; peakMb: number };
};
const MiB = 1024 * 1024;

test('a large heap that holds steady may grow by 30 % between full collections', () => {
  assert.equal(heapGrowingPercent(2048 * MiB, 2000 * MiB), HEAP_GROWING_PERCENT);
  assert.equal(heapGrowingPercent(400 * MiB, 410 * MiB), HEAP_GROWING_PERCENT);
});

test('a small heap that holds steady may grow by 64 MiB between full collections, however little 30 % of it is', () => {
  assert.equal(MIN_HEAP_GROWTH_BYTES, 64 * MiB);
  assert.equal(heapGrowingPercent(64 * MiB, 60 * MiB), 100);
  assert.equal(heapGrowingPercent(160 * MiB, 160 * MiB), 40);
  assert.equal(heapGrowingPercent(1, 1), 300); // never more than V8's own largest factor
});

test('a heap that grew since the full collection before may grow by 30 % only', () => {
  assert.equal(heapGrowingPercent(100 * MiB, 60 * MiB), HEAP_GROWING_PERCENT);
  assert.equal(heapGrowingPercent(60 * MiB, undefined), HEAP_GROWING_PERCENT);
});

test('with growth of 30 %, promoted garbage is collected far sooner: more full collections, a lower peak', async () => {
  const [unbound, thirty] = await Promise.all([collect('default'), collect('thirty')]);
  assert.ok(thirty.fullCollections >= 2 * Math.max(1, unbound.fullCollections), JSON.stringify({ unbound, thirty }));
  assert.ok(thirty.peakMb < unbound.peakMb * 0.8, JSON.stringify({ unbound, thirty }));
});

test('a small heap holding steady is collected in full less often than 30 % growth would', async () => {
  const [bound, thirty] = await Promise.all([collect('bound'), collect('thirty')]);
  assert.ok(bound.lateFullCollections * 3 <= thirty.lateFullCollections * 2, JSON.stringify({ bound, thirty }));
});

test('a growth given to node itself, on its command line or in NODE_OPTIONS, is left as it is', () => {
  assert.equal(boundHeapGrowth({ execArgv: ['--heap-growing-percent=50'], nodeOptions: '' }), false);
  assert.equal(boundHeapGrowth({ execArgv: [], nodeOptions: '--max-old-space-size=4096 --heap_growing_percent=10' }), false);
});
