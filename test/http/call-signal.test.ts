import assert from 'node:assert/strict';
import { EventEmitter, getEventListeners } from 'node:events';
import type { ServerResponse } from 'node:http';
import { beforeEach, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { listenForAbort } from '../../src/abort-slot.js';
import { callSignal, spareControllers } from '../../src/http/call-signal.js';

const LONG = 60_000;
/** A response that never closes: enough for a call answered in one piece. */
const response = () => new EventEmitter() as unknown as ServerResponse;
const oneShot = (timeoutMs = LONG) => callSignal(response(), { timeoutMs, stopsWhenCallerLeaves: false });

/** Takes every spare controller, so that each test starts from none. */
function drainSpares() {
  while (spareControllers() > 0) oneShot().done();
}

describe('the signal a call runs under', () => {
  beforeEach(drainSpares);

  it('a call answered in one piece hands its controller to the next call', () => {
    const first = oneShot();
    first.answered();
    assert.equal(spareControllers(), 1);
    const next = oneShot();
    assert.equal(next.signal, first.signal);
    assert.equal(next.signal.aborted, false);
    next.done();
  });

  it('a reused signal aborts at the deadline of the call that now runs under it', async () => {
    oneShot().answered();
    const next = oneShot(20);
    await sleep(60);
    assert.equal(next.signal.aborted, true);
    assert.equal((next.signal.reason as DOMException).name, 'TimeoutError');
  });

  it('the deadline of a call that answered never aborts the call that reuses its signal', async () => {
    const first = oneShot(20);
    first.answered();
    const next = oneShot();
    assert.equal(next.signal, first.signal);
    await sleep(60);
    assert.equal(next.signal.aborted, false);
    next.done();
  });

  it('a call that failed keeps its controller out of use (work of it may still look at the signal)', () => {
    const failed = oneShot();
    failed.done();
    assert.equal(spareControllers(), 0);
    assert.notEqual(oneShot().signal, failed.signal);
  });

  it('a signal that still has a listener is not handed back', () => {
    const first = oneShot();
    first.signal.addEventListener('abort', () => {});
    first.answered();
    assert.equal(spareControllers(), 0);
    assert.notEqual(oneShot().signal, first.signal);
  });

  it('a signal whose slot still has a request listening is not handed back', () => {
    const first = oneShot();
    listenForAbort(first.signal, () => {});
    first.answered();
    assert.equal(spareControllers(), 0);
    assert.notEqual(oneShot().signal, first.signal);
  });

  it('an upstream request listens through the slot of a reused signal, and hears the deadline of the call now under it', async () => {
    oneShot().answered();
    const next = oneShot(20);
    let heard = 0;
    listenForAbort(next.signal, () => heard++);
    assert.equal(getEventListeners(next.signal, 'abort').length, 1, 'the slot’s own listener only');
    await sleep(60);
    assert.equal(heard, 1);
  });

  it('a signal aborted at its deadline is not handed back', async () => {
    const late = oneShot(5);
    await sleep(30);
    assert.equal(late.signal.aborted, true);
    late.answered();
    assert.equal(spareControllers(), 0);
    assert.equal(oneShot().signal.aborted, false);
  });

  it('a stream never hands its controller back, and its signal aborts when the caller leaves', () => {
    oneShot().answered(); // one spare, which a stream must not take
    const raw = Object.assign(new EventEmitter(), { writableFinished: false }) as unknown as ServerResponse;
    const stream = callSignal(raw, { timeoutMs: LONG, stopsWhenCallerLeaves: true });
    assert.equal(spareControllers(), 1);
    raw.emit('close');
    assert.equal(stream.signal.aborted, true);
    stream.answered();
    assert.equal(spareControllers(), 1);
  });
});
