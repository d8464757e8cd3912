// The answer watch (answer-watch.ts): answers past their deadline expire, once; one that heard data
// since the last sweep is timed again from that sweep; an answer taken out of the list is forgotten
// wherever it stood in it.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AnswerWatch, type WatchedAnswer } from '../../src/upstreams/answer-watch.js';

describe('the answer watch', () => {
  const answer = (deadline: number, expired: string[], name: string, quietMs = 0): WatchedAnswer => ({
    deadline,
    heard: false,
    quietMs,
    expire: () => expired.push(name),
    previous: undefined,
    next: undefined,
    watched: false,
  });

  test('expires the answers past their deadline, and only those, once each', () => {
    const watch = new AnswerWatch(60_000);
    const expired: string[] = [];
    const [early, late, never] = [answer(100, expired, 'early'), answer(300, expired, 'late'), answer(Number.POSITIVE_INFINITY, expired, 'never')];
    for (const a of [early, late, never]) watch.watch(a);
    watch.sweep(99);
    assert.deepEqual(expired, []);
    watch.sweep(100);
    assert.deepEqual(expired, ['early']);
    watch.sweep(1_000);
    watch.sweep(2_000);
    assert.deepEqual(expired, ['early', 'late']);
    assert.equal(watch.size, 1);
    watch.unwatch(never);
    watch.sweep(3_000);
  });

  test('an answer that heard data since the last sweep is timed again from that sweep, not expired by it', () => {
    const watch = new AnswerWatch(60_000);
    const expired: string[] = [];
    const streaming = answer(100, expired, 'streaming', 500);
    watch.watch(streaming);
    streaming.heard = true; // a part of its body came, after its deadline had passed but before the sweep
    watch.sweep(150);
    assert.deepEqual([expired, streaming.deadline, streaming.heard], [[], 650, false]);
    watch.sweep(649);
    assert.deepEqual(expired, []);
    watch.sweep(650);
    assert.deepEqual(expired, ['streaming']);
  });

  test('an answer whose body is not timed (0) stays untimed when it hears data', () => {
    const watch = new AnswerWatch(60_000);
    const expired: string[] = [];
    const untimed = answer(Number.POSITIVE_INFINITY, expired, 'untimed', 0);
    watch.watch(untimed);
    untimed.heard = true;
    watch.sweep(1_000);
    watch.sweep(1_000_000);
    assert.deepEqual([expired, untimed.deadline], [[], Number.POSITIVE_INFINITY]);
  });

  test('forgets an answer unwatched from anywhere in its list', () => {
    const watch = new AnswerWatch(60_000);
    const expired: string[] = [];
    const answers = ['a', 'b', 'c', 'd'].map((name) => answer(0, expired, name));
    for (const a of answers) watch.watch(a);
    watch.unwatch(answers[2]!); // the middle
    watch.unwatch(answers[3]!); // the first (the newest is first)
    watch.unwatch(answers[3]!); // twice is once
    assert.equal(watch.size, 2);
    watch.sweep(1);
    assert.deepEqual(expired.sort(), ['a', 'b']);
    assert.equal(watch.size, 0);
  });
});
