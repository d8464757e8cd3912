// Run as a child process by heap-growth.test.ts: promotes old-generation garbage beside a live set
// (as slow streams do) and prints how many full collections ran and the peak RSS.
import { constants, PerformanceObserver } from 'node:perf_hooks';
import { boundHeapGrowth } from '../../src/cli/heap-growth.js';

if (process.argv[2] === 'bound') boundHeapGrowth([], '');
let fullCollections = 0;
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) if ((entry as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) fullCollections++;
}).observe({ entryTypes: ['gc'] });
const kept = Array.from({ length: 600_000 }, (_, i) => ({ i, text: `kept-${i}` }));
// Each object outlives two scavenges, so it is promoted, then dropped: garbage in the old generation.
const window: unknown[] = new Array(300_000);
let peak = 0;
for (let i = 0; i < 4_000_000; i++) {
  window[i % window.length] = { i, text: `x${i}`, pair: [i, i] };
  if (i % 100_000 === 0) peak = Math.max(peak, process.memoryUsage().rss);
}
setTimeout(() => process.stdout.write(JSON.stringify({ fullCollections, peakMb: Math.round(peak / 1e6), kept: kept.length })), 20);
