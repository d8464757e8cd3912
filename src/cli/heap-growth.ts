// How far V8 lets the old generation grow between full collections. A gateway holding many slow
// streams promotes a little of every chunk, and with V8's own factor (up to four times the heap
// left by the last collection) that garbage took it from 765 to 1 035 MB of RSS while holding
// 9 900 streams, depending on when the collection fell; with growth fixed at 30 % it stayed near
// 535 MB, for about 1 % more CPU a plain call, within the noise (`npm run bench -- --slow-streams`). A
// --heap-growing-percent given to node itself (on its command line or in NODE_OPTIONS) wins.
import v8 from 'node:v8';

export const HEAP_GROWING_PERCENT = 30;

const FLAG = /^--heap[-_]growing[-_]percent\b/;

/** Sets the growth unless node was given one; whether it set it. */
export function boundHeapGrowth(execArgv: readonly string[] = process.execArgv, nodeOptions = process.env.NODE_OPTIONS ?? ''): boolean {
  if ([...execArgv, ...nodeOptions.split(/\s+/)].some((arg) => FLAG.test(arg))) return false;
  // Read by V8 at every full collection, so it applies from the next one on.
  v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  return true;
}
