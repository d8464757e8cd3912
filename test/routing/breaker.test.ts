// Channel health (routing/breaker.ts) on a clock of the test's own: circuits open after N failures
// and refuse calls while open, let exactly one probe through when half-open, double the cool-down
// on a failed probe up to the max, and wake the callers waiting on a probe when it comes back; a 429
// rests only its key, for its newest Retry-After; a refused key opens only itself; the operator's
// switch; and the recent figures the admin view shows.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createRouteHealth, type HealthObserver } from '../../src/routing/breaker.js';
import type { AttemptFailure } from '../../src/routing/health.js';

const SERVER_ERROR: AttemptFailure = { kind: 'server_error', status: 500 };

function breaker(observer?: HealthObserver) {
  let now = 1_000_000;
  const health = createRouteHealth(
    {
      failuresToOpen: 3,
      cooldownMs: 1_000,
      maxCooldownMs: 3_000,
      rateLimitRestMs: 500,
      channels: { a: ['ka', 'kb'], b: [] },
      observer,
    },
    () => now,
  );
  return {
    health,
    now: () => now,
    advance: (ms: number) => {
      now += ms;
    },
    /** One attempt on channel a's key `key`, asked as the router asks (key, then channel). */
    tryA: (key = 'ka') => health.keyAvailable('a', key, now) && health.channelAvailable('a', now),
    failA: (key: string | null = 'ka', failure = SERVER_ERROR) => health.failed({ channel: 'a', keyId: key }, failure, now),
    okA: (key: string | null = 'ka', latencyMs = 10) => health.succeeded({ channel: 'a', keyId: key }, latencyMs, now),
  };
}

test('a channel opens after N consecutive failures and refuses calls until its cool-down ends', () => {
  const b = breaker();
  for (let i = 0; i < 2; i++) b.failA();
  assert.equal(b.health.view('a')?.state, 'closed');
  assert.equal(b.tryA(), true);
  b.failA();
  assert.equal(b.health.view('a')?.state, 'open');
  assert.equal(b.tryA('ka'), false);
  assert.equal(b.tryA('kb'), false);
  assert.equal(b.health.view('a')?.opens_until, new Date(b.now() + 1_000).toISOString());
  assert.equal(b.health.nextAvailableAt(['a'], b.now()), b.now() + 1_000);
  b.advance(999);
  assert.equal(b.tryA(), false);
});

test('a success between failures resets the count: only consecutive failures open', () => {
  const b = breaker();
  b.failA();
  b.failA();
  b.okA();
  b.failA();
  b.failA();
  assert.equal(b.health.view('a')?.state, 'closed');
});

test('after the cool-down one probe goes through and a second concurrent caller is refused', () => {
  const b = breaker();
  for (let i = 0; i < 3; i++) b.failA();
  b.advance(1_000);
  assert.equal(b.health.view('a')?.state, 'half_open');
  assert.equal(b.tryA('ka'), true);
  assert.equal(b.tryA('kb'), false);
  assert.equal(b.health.channelAvailable('a', b.now()), false);
  assert.equal(b.health.nextAvailableAt(['a'], b.now()), undefined);
});

test('a successful probe closes the circuit and the cool-down starts again from its first length', () => {
  const b = breaker();
  for (let i = 0; i < 3; i++) b.failA();
  b.advance(1_000);
  assert.equal(b.tryA(), true);
  b.okA();
  assert.equal(b.health.view('a')?.state, 'closed');
  assert.equal(b.tryA(), true);
  assert.equal(b.tryA('kb'), true);
  for (let i = 0; i < 3; i++) b.failA();
  assert.equal(b.health.view('a')?.opens_until, new Date(b.now() + 1_000).toISOString());
});

test('a failed probe re-opens the circuit for twice as long, up to the max cool-down', () => {
  const b = breaker();
  for (let i = 0; i < 3; i++) b.failA();
  for (const cooldown of [2_000, 3_000, 3_000]) {
    b.advance(3_000);
    assert.equal(b.tryA(), true);
    b.failA();
    assert.equal(b.health.view('a')?.state, 'open');
    assert.equal(b.health.view('a')?.opens_until, new Date(b.now() + cooldown).toISOString());
  }
});

test('a probe that ends with no verdict (the caller left) frees the probe for the next caller', () => {
  const b = breaker();
  for (let i = 0; i < 3; i++) b.failA();
  b.advance(1_000);
  assert.equal(b.tryA(), true);
  b.health.released({ channel: 'a', keyId: 'ka' }, b.now());
  assert.equal(b.tryA(), true);
});

test('a 429 rests only that key for its Retry-After, and counts against neither the key nor the channel', () => {
  const b = breaker();
  for (let i = 0; i < 5; i++) b.failA('ka', { kind: 'rate_limited', retryAfterMs: 2_000 });
  assert.equal(b.tryA('ka'), false);
  assert.equal(b.tryA('kb'), true);
  const view = b.health.view('a')!;
  assert.equal(view.state, 'closed');
  assert.deepEqual(
    view.keys.map((k) => [k.key, k.state, k.rested_until]),
    [
      ['ka', 'closed', new Date(b.now() + 2_000).toISOString()],
      ['kb', 'closed', null],
    ],
  );
  b.advance(2_000);
  assert.equal(b.tryA('ka'), true);
});

test('a 429 without Retry-After rests the key for the configured default', () => {
  const b = breaker();
  b.failA('ka', { kind: 'rate_limited', retryAfterMs: undefined });
  b.advance(499);
  assert.equal(b.tryA('ka'), false);
  b.advance(1);
  assert.equal(b.tryA('ka'), true);
});

test('when every key of the only channel rests, the next available time is the soonest key back', () => {
  const b = breaker();
  b.failA('ka', { kind: 'rate_limited', retryAfterMs: 2_000 });
  b.failA('kb', { kind: 'rate_limited', retryAfterMs: 700 });
  assert.equal(b.health.nextAvailableAt(['a'], b.now()), b.now() + 700);
});

test('a refused key opens that key at once and leaves the channel and its other key in traffic', () => {
  const b = breaker();
  b.failA('ka', { kind: 'key_refused', status: 401 });
  assert.equal(b.tryA('ka'), false);
  assert.equal(b.tryA('kb'), true);
  const view = b.health.view('a')!;
  assert.equal(view.state, 'closed');
  assert.deepEqual(
    view.keys.map((k) => [k.key, k.state]),
    [
      ['ka', 'open'],
      ['kb', 'closed'],
    ],
  );
  b.advance(1_000);
  assert.equal(b.tryA('ka'), true); // its probe
  assert.equal(b.tryA('ka'), false);
  b.failA('ka', { kind: 'key_refused', status: 403 });
  assert.equal(b.health.view('a')?.keys[0]?.state, 'open');
});

test('a half-open key keeps its probe when the channel itself is out, so no probe is lost', () => {
  const b = breaker();
  b.failA('ka', { kind: 'key_refused', status: 401 });
  b.health.setDisabled('a', true);
  b.advance(1_000);
  assert.equal(b.tryA('ka'), false);
  b.health.setDisabled('a', false);
  assert.equal(b.tryA('ka'), true);
});

test('a disabled channel takes no call until enabled, and an unknown channel cannot be disabled', () => {
  const b = breaker();
  assert.equal(b.health.setDisabled('a', true), true);
  assert.equal(b.health.view('a')?.state, 'disabled');
  assert.equal(b.tryA(), false);
  assert.equal(b.health.nextAvailableAt(['a'], b.now()), undefined);
  assert.equal(b.health.setDisabled('a', false), true);
  assert.equal(b.health.view('a')?.state, 'closed');
  assert.equal(b.tryA(), true);
  assert.equal(b.health.setDisabled('nowhere', true), false);
});

test('a channel without keys opens on its own failures and reports its state for the gauge', () => {
  const b = breaker();
  for (let i = 0; i < 3; i++) b.health.failed({ channel: 'b', keyId: null }, { kind: 'unreachable' }, b.now());
  assert.equal(b.health.channelAvailable('b', b.now()), false);
  b.health.setDisabled('a', true);
  assert.deepEqual(b.health.states(), [
    { channel: 'a', state: 'disabled' },
    { channel: 'b', state: 'open' },
  ]);
});

test('the view keeps recent requests, error rate, latency percentiles and the last error without secrets', () => {
  const b = breaker();
  for (let i = 1; i <= 100; i++) b.okA(i % 2 === 0 ? 'ka' : 'kb', i);
  b.advance(10);
  b.failA('kb', { kind: 'server_error', status: 502 });
  const view = b.health.view('a')!;
  assert.equal(view.requests, 100); // the window keeps the last 100 attempts
  assert.equal(view.error_rate, 0.01);
  assert.deepEqual(view.latency_ms, { p50: 51, p99: 100 });
  assert.deepEqual(view.last_error, { message: 'upstream answered 502', at: new Date(b.now()).toISOString() });
  assert.deepEqual(
    view.keys.map((k) => [k.key, k.requests, k.error_rate]),
    [
      ['ka', 50, 0],
      ['kb', 51, 0.02],
    ],
  );
  b.advance(60_000);
  const later = b.health.view('a')!;
  assert.deepEqual([later.requests, later.error_rate, later.latency_ms], [0, 0, { p50: null, p99: null }]);
  assert.equal(later.last_error?.message, 'upstream answered 502'); // kept past the window
});

test('the view forgets a failure once a hundred later attempts have followed it, but keeps it as the last error', () => {
  const b = breaker();
  b.failA('ka', { kind: 'server_error', status: 503 });
  for (let i = 1; i <= 99; i++) b.okA('ka', i);
  assert.deepEqual([b.health.view('a')!.requests, b.health.view('a')!.error_rate], [100, 0.01]);
  b.okA('ka', 100);
  const view = b.health.view('a')!;
  assert.deepEqual([view.requests, view.error_rate, view.latency_ms], [100, 0, { p50: 50, p99: 99 }]);
  assert.equal(view.last_error?.message, 'upstream answered 503');
});

test('the observer hears every attempt and each circuit transition', () => {
  const attempts: string[] = [];
  const transitions: string[] = [];
  const b = breaker({
    attempt: (channel, outcome) => attempts.push(`${channel}:${outcome}`),
    transition: ({ channel, keyId }, { from, to }) => transitions.push(`${channel}/${keyId}:${from}->${to}`),
  });
  for (let i = 0; i < 3; i++) b.failA();
  b.advance(1_000);
  b.tryA();
  b.okA();
  b.failA('kb', { kind: 'key_refused', status: 401 });
  assert.deepEqual(attempts, ['a:server_error', 'a:server_error', 'a:server_error', 'a:ok', 'a:key_refused']);
  assert.deepEqual(transitions, ['a/null:closed->open', 'a/null:half_open->closed', 'a/kb:closed->open']);
});

test('with the breaker off, failures, refused keys and 429s are counted but take nothing out', () => {
  const health = createRouteHealth(
    { trips: false, failuresToOpen: 1, cooldownMs: 1_000, maxCooldownMs: 3_000, rateLimitRestMs: 500, channels: { a: ['ka'] } },
    () => 0,
  );
  health.failed({ channel: 'a', keyId: 'ka' }, SERVER_ERROR, 0);
  health.failed({ channel: 'a', keyId: 'ka' }, { kind: 'key_refused', status: 401 }, 0);
  health.failed({ channel: 'a', keyId: 'ka' }, { kind: 'rate_limited', retryAfterMs: 60_000 }, 0);
  assert.equal(health.keyAvailable('a', 'ka', 0) && health.channelAvailable('a', 0), true);
  assert.deepEqual([health.view('a', 0)?.state, health.view('a', 0)?.requests, health.view('a', 0)?.error_rate], ['closed', 3, 1]);
});

test('a later 429 with a shorter Retry-After shortens the key’s rest: a key never rests past its upstream’s newest word', () => {
  const b = breaker();
  b.failA('ka', { kind: 'rate_limited', retryAfterMs: 2_500 });
  b.failA('ka', { kind: 'rate_limited', retryAfterMs: 1_000 });
  assert.equal(b.health.view('a')?.keys[0]?.rested_until, new Date(b.now() + 1_000).toISOString());
  b.advance(1_000);
  assert.equal(b.tryA('ka'), true);
});

test('a 429 without Retry-After keeps a longer rest its upstream asked for before', () => {
  const b = breaker();
  b.failA('ka', { kind: 'rate_limited', retryAfterMs: 2_000 });
  b.failA('ka', { kind: 'rate_limited', retryAfterMs: undefined });
  assert.equal(b.health.nextAvailableAt(['a'], b.now()), b.now()); // kb is free
  assert.equal(b.health.view('a')?.keys[0]?.rested_until, new Date(b.now() + 2_000).toISOString());
});

test('a half-open channel’s probe in flight can be waited for, and its success admits every waiting caller at once', async () => {
  const b = breaker();
  for (let i = 0; i < 3; i++) b.failA();
  b.advance(1_000);
  assert.equal(b.health.probeEnded(['a'], b.now()), undefined); // no probe out yet: nothing to wait for
  assert.equal(b.tryA(), true);
  const probe = b.health.probeEnded(['a'], b.now());
  assert.ok(probe);
  b.okA();
  await probe;
  assert.deepEqual([b.tryA('ka'), b.tryA('kb'), b.tryA('ka')], [true, true, true]);
});

test('a failed probe also ends the wait, and the waiting callers find the channel open again', async () => {
  const b = breaker();
  for (let i = 0; i < 3; i++) b.failA();
  b.advance(1_000);
  assert.equal(b.tryA(), true);
  const probe = b.health.probeEnded(['a'], b.now());
  b.failA();
  await probe;
  assert.equal(b.tryA(), false);
  assert.equal(b.health.nextAvailableAt(['a'], b.now()), b.now() + 2_000);
});
