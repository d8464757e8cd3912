// How far V8 lets the old generation grow between full collections: by 30 % of what the last one
// left while that grows, and by 30 % or 64 MiB, whichever is more, while it holds steady.
//
// A gateway holding many slow streams promotes a little of every chunk, and with V8's own factor (up
// to four times the heap left by the last collection) that garbage took it from 765 to 1 035 MB of
// RSS while holding 9 900 streams, depending on when the collection fell; growth of 30 % kept it
// near 535 MB. But 30 % of a busy gateway's heap (60 MB, most of it the tokenizer's tables and the
// code) is less than Node.js 24's young generation holds: under short streams it ran a full
// collection, marking the whole old generation, every 0.3 s instead of scavenging, and the 64-word
// stream cost a third more CPU than with the room of 64 MiB (docs/performance.md). The room is
// only for a heap that holds steady: the growth set after one collection applies at the next, and
// a heap filling with streams would be given room for its size of a collection before.
//
// A --heap-growing-percent given to node itself (on its command line or in NODE_OPTIONS) wins.
import { constants, type PerformanceEntry, PerformanceObserver } from 'node:perf_hooks';
import v8 from 'node:v8';

export const HEAP_GROWING_PERCENT = 30;
/** The least room the old generation gets between full collections. */
export const MIN_HEAP_GROWTH_BYTES = 64 * 1024 * 1024;
/** The most: V8's own largest factor (4). */
export const MAX_HEAP_GROWING_PERCENT = 300;
/** A heap that a full collection left this much larger than the one before is growing. */
const GROWING = 1.25;

const FLAG = /^--heap[-_]growing[-_]percent\b/;

/** Whether a `gc` performance entry is of a full collection (mark-compact). */
export const isFullCollection = (entry: PerformanceEntry): boolean =>
  (entry as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR;

/**
 * The growth, in percent, for a heap that a full collection left at `usedBytes`, the one before at
 * `previousBytes` (undefined: none yet, a heap still growing).
 */
export function heapGrowingPercent(usedBytes: number, previousBytes: number | undefined, minGrowthBytes = MIN_HEAP_GROWTH_BYTES): number {
  if (previousBytes === undefined || usedBytes > previousBytes * GROWING) return HEAP_GROWING_PERCENT;
  const forRoom = Math.ceil((minGrowthBytes * 100) / Math.max(usedBytes, 1));
  return Math.min(MAX_HEAP_GROWING_PERCENT, Math.max(HEAP_GROWING_PERCENT, forRoom));
}

export interface HeapGrowthOptions {
  execArgv?: readonly string[];
  nodeOptions?: string;
  minGrowthBytes?: number;
}

/** Bounds the growth after every full collection, unless node was given one; whether it does. */
export function boundHeapGrowth({
  execArgv = process.execArgv,
  nodeOptions = process.env.NODE_OPTIONS ?? '',
  minGrowthBytes = MIN_HEAP_GROWTH_BYTES,
}: HeapGrowthOptions = {}): boolean {
  if ([...execArgv, ...nodeOptions.split(/\s+/)].some((arg) => FLAG.test(arg))) return false;
  let previousBytes: number | undefined;
  const setFor = (usedBytes: number) => {
    v8.setFlagsFromString(`--heap-growing-percent=${heapGrowingPercent(usedBytes, previousBytes, minGrowthBytes)}`);
    previousBytes = usedBytes;
  };
  setFor(v8.getHeapStatistics().used_heap_size);
  // The heap is read when the observer runs, a few milliseconds after the collection: what was
  // allocated meanwhile counts as left by it, which errs only towards less room.
  const afterFullCollections = new PerformanceObserver((list) => {
    if (list.getEntries().some(isFullCollection)) setFor(v8.getHeapStatistics().used_heap_size);
  });
  afterFullCollections.observe({ entryTypes: ['gc'] });
  return true;
}
