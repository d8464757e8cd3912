import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { describe, it } from 'node:test';
import { abortSlotFree, addAbortSlot, listenForAbort } from '../src/abort-slot.js';

const slotted = () => {
  const controller = new AbortController();
  addAbortSlot(controller.signal);
  return controller;
};

describe('listening for an abort through a signal’s slot', () => {
  it('a handler plugged into the slot is called once when the signal aborts, with no listener added for it', () => {
    const controller = slotted();
    let calls = 0;
    listenForAbort(controller.signal, () => calls++);
    assert.equal(getEventListeners(controller.signal, 'abort').length, 1, 'the slot’s own listener only');
    assert.equal(abortSlotFree(controller.signal), false);
    controller.abort();
    controller.abort();
    assert.equal(calls, 1);
  });

  it('a handler that stopped listening is not called, and the slot is free for the next request', () => {
    const controller = slotted();
    let calls = 0;
    const stop = listenForAbort(controller.signal, () => calls++);
    stop();
    assert.equal(abortSlotFree(controller.signal), true);
    let nextCalls = 0;
    listenForAbort(controller.signal, () => nextCalls++);
    controller.abort();
    assert.deepEqual({ calls, nextCalls }, { calls: 0, nextCalls: 1 });
  });

  it('a second handler while the slot is taken listens the usual way: both are called', () => {
    const controller = slotted();
    const heard: string[] = [];
    listenForAbort(controller.signal, () => heard.push('slot'));
    const stopSecond = listenForAbort(controller.signal, () => heard.push('listener'));
    assert.equal(getEventListeners(controller.signal, 'abort').length, 2);
    controller.abort();
    assert.deepEqual(heard.sort(), ['listener', 'slot']);
    stopSecond();
  });

  it('stopping a handler that no longer holds the slot leaves the slot’s new handler alone', () => {
    const controller = slotted();
    const stopFirst = listenForAbort(controller.signal, () => {});
    stopFirst();
    let calls = 0;
    listenForAbort(controller.signal, () => calls++);
    stopFirst();
    controller.abort();
    assert.equal(calls, 1);
  });

  it('a signal without a slot is listened to the usual way, and let go when the handler stops', () => {
    const controller = new AbortController();
    let calls = 0;
    const stop = listenForAbort(controller.signal, () => calls++);
    assert.equal(getEventListeners(controller.signal, 'abort').length, 1);
    stop();
    assert.equal(getEventListeners(controller.signal, 'abort').length, 0);
    assert.equal(abortSlotFree(controller.signal), true);
    controller.abort();
    assert.equal(calls, 0);
  });
});
