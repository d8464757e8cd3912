// Keeps one of Node's tick objects alive for the life of the process.
//
// process.nextTick builds each tick object from an object literal with computed (symbol) keys. V8
// keeps the literal's hidden classes only while some object has them (transitions are weak), and
// the inline cache of a computed key goes megamorphic for good the first time it meets a class it
// has not seen. A full collection at a moment when no tick object is alive (between two turns of the
// loop, say) frees those classes, the next tick makes new ones, and from then on V8's runtime builds
// every tick object: about 400 ns a tick instead of 100, and some 30 ticks a stream
// (docs/performance.md). A tick object held here holds its classes, so they are never made again.
// It runs when imported, first thing in the entry, before the loading of everything else can
// trigger a full collection.
import { createHook } from 'node:async_hooks';

let kept: object | undefined;

/** Captures one tick object through a hook enabled for one `nextTick` only. */
function keepTickObjectShape(): void {
  const hook = createHook({
    init(_asyncId, type, _triggerAsyncId, resource) {
      if (type === 'TickObject') kept ??= resource;
    },
  });
  hook.enable();
  process.nextTick(() => {});
  hook.disable();
}

/** Whether a tick object is held. */
export const tickObjectKept = () => kept !== undefined;

keepTickObjectShape();
