// Failed authentications per client address: a burst, then one a refill interval, per address.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { clientGroup, createAuthFailureLimit } from '../../src/limits/auth-failures.js';

function fakeClock() {
  let nowMs = 1_000_000;
  return { now: () => nowMs, advance: (ms: number) => void (nowMs += ms) };
}

test('an address is refused after perMinute failures, for as long as one refill takes, and others are not', () => {
  const clock = fakeClock();
  const limit = createAuthFailureLimit({ perMinute: 10, now: clock.now });
  for (let i = 0; i < 10; i++) {
    assert.equal(limit.refusedForMs('203.0.113.7'), 0);
    limit.recordFailure('203.0.113.7');
  }
  assert.equal(limit.refusedForMs('203.0.113.7'), 6_000); // 10 a minute: one more each 6 s
  assert.equal(limit.refusedForMs('203.0.113.8'), 0);
  clock.advance(6_000);
  assert.equal(limit.refusedForMs('203.0.113.7'), 0);
  limit.recordFailure('203.0.113.7');
  assert.equal(limit.refusedForMs('203.0.113.7'), 6_000);
});

test('IPv6 clients are counted by /64, and IPv4-mapped addresses as IPv4', () => {
  assert.equal(clientGroup('2001:db8:1:2:aaaa::1'), '2001:db8:1:2::/64');
  assert.equal(clientGroup('2001:db8:1:2:bbbb::9'), '2001:db8:1:2::/64');
  assert.equal(clientGroup('::ffff:198.51.100.4'), '198.51.100.4');
  const limit = createAuthFailureLimit({ perMinute: 1, now: fakeClock().now });
  limit.recordFailure('2001:db8:1:2::1');
  assert.ok(limit.refusedForMs('2001:db8:1:2::ffff') > 0, 'another address of the same /64');
  assert.equal(limit.refusedForMs('2001:db8:1:3::1'), 0);
});

/** A lookup the test ends by hand, recording when it started. */
function heldLookups() {
  const started: string[] = [];
  const ends = new Map<string, () => void>();
  const lookup = (name: string) => () =>
    new Promise<string>((resolve) => {
      started.push(name);
      ends.set(name, () => resolve(name));
    });
  const turn = () => new Promise((resolve) => setImmediate(resolve));
  return { started, lookup, end: (name: string) => ends.get(name)!(), turn };
}

test('an address past its limit has its lookups run one at a time, each still answered; others run at once', async () => {
  const limit = createAuthFailureLimit({ perMinute: 1, now: fakeClock().now });
  limit.recordFailure('203.0.113.7');
  const { started, lookup, end, turn } = heldLookups();
  const first = limit.paceLookup('203.0.113.7', lookup('a'));
  const second = limit.paceLookup('203.0.113.7', lookup('b'));
  const elsewhere = limit.paceLookup('203.0.113.8', lookup('c'));
  await turn();
  assert.deepEqual([...started].sort(), ['a', 'c'], 'b waits for a');
  end('a');
  await turn();
  assert.deepEqual([...started].sort(), ['a', 'b', 'c']);
  end('b');
  end('c');
  assert.deepEqual(await Promise.all([first, second, elsewhere]), ['a', 'b', 'c']);
});

test('an address in good standing has its lookups run side by side', async () => {
  const limit = createAuthFailureLimit({ perMinute: 5, now: fakeClock().now });
  limit.recordFailure('203.0.113.7');
  const { started, lookup, end, turn } = heldLookups();
  const answers = [limit.paceLookup('203.0.113.7', lookup('a')), limit.paceLookup('203.0.113.7', lookup('b'))];
  await turn();
  assert.deepEqual(started, ['a', 'b']);
  end('a');
  end('b');
  assert.deepEqual(await Promise.all(answers), ['a', 'b']);
});
