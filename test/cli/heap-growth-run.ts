// Run as a child process by heap-growth.test.ts: promotes old-generation garbage beside a live set
// (as slow streams do) and prints how many full collections ran and the peak RSS. The mode names the
// growth: V8's own ('default'), the gateway's ('bound'), or 30 % with no floor of room ('thirty').
import { PerformanceObserver } from 'node:perf_hooks';
import { boundHeapGrowth, isFullCollection } from '../../src/cli/heap-growth.js';

const mode = process.argv[2];
if (mode === 'bound') boundHeapGrowth({ execArgv: [], nodeOptions: '' });
if (mode === 'thirty') boundHeapGrowth({ execArgv: [], nodeOptions: '', minGrowthBytes: 0 });
let fullCollections = 0;
/** Those of the second half, when the live set holds steady. */
let lateFullCollections = 0;
let late = false;
new PerformanceObserver((list) => {
  for (const entry of list.getEntries())
    if (isFullCollection(entry)) {
      fullCollections++;
      if (late) lateFullCollections++;
    }
}).observe({ entryTypes: ['gc'] });
const kept = Array.from({ length: 50_000 }, (_, i) => ({ i, text: `kept-${i}` }));
// Each object outlives two scavenges, so it is promoted, then dropped: garbage in the old generation.
const window: unknown[] = new Array(150_000);
let peak = 0;
// In slices, with a turn of the event loop between them: the bound is set again after each full
// collection, by an observer that runs between turns.
for (let slice = 0; slice < 60; slice++) {
  late = slice >= 20;
  for (let i = slice * 100_000; i < (slice + 1) * 100_000; i++) window[i % window.length] = { i, text: `x${i}`, pair: [i, i] };
  peak = Math.max(peak, process.memoryUsage().rss);
  await new Promise((resolve) => setImmediate(resolve));
}
setTimeout(() => process.stdout.write(JSON.stringify({ fullCollections, lateFullCollections, peakMb: Math.round(peak / 1e6), kept: kept.length })), 20);
