// What moves a call to the next key or channel, what never does, and the bounds on attempts.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { GatewayError } from '../../src/errors.js';
import type { ResolvedModel } from '../../src/pipeline/types.js';
import { createRouteHealth } from '../../src/routing/breaker.js';
import { callWithFailover, failoverStep, NoChannelAvailableError, surelyNotStarted } from '../../src/routing/failover.js';
import { alwaysAvailable, type RouteHealth } from '../../src/routing/health.js';
import type { Attempt } from '../../src/routing/plan.js';
import { UpstreamHttpError } from '../../src/upstreams/http.js';
import { ConnectionWaitTimeoutError } from '../../src/upstreams/wait-bounded-pool.js';

const http = (status: number, retryAfter?: string) => new UpstreamHttpError(status, '{}', 'application/json', retryAfter);
const coded = (code: string) => Object.assign(new Error(code), { code });

describe('failoverStep', () => {
  test('the caller’s own faults (400, 404, 413, 422) are never retried', () => {
    for (const status of [400, 404, 413, 422]) assert.deepEqual(failoverStep(http(status)), { next: 'none' });
  });
  test('a refused key (401, 403) or a rate-limited one (429, with its Retry-After) moves to the next key', () => {
    assert.deepEqual(failoverStep(http(401)), { next: 'key', failure: { kind: 'key_refused', status: 401 } });
    assert.deepEqual(failoverStep(http(403)), { next: 'key', failure: { kind: 'key_refused', status: 403 } });
    assert.deepEqual(failoverStep(http(429, '7')), { next: 'key', failure: { kind: 'rate_limited', retryAfterMs: 7_000 } });
  });
  test('a 5xx, a 408, no connection or no headers in time moves to the next channel', () => {
    assert.deepEqual(failoverStep(http(503)), { next: 'channel', failure: { kind: 'server_error', status: 503 } });
    assert.deepEqual(failoverStep(http(408)), { next: 'channel', failure: { kind: 'server_error', status: 408 } });
    for (const code of ['ECONNREFUSED', 'ECONNRESET', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT']) {
      assert.deepEqual(failoverStep(coded(code)), { next: 'channel', failure: { kind: 'unreachable' } });
    }
  });
  test('this instance’s full pool moves on without blaming the channel', () => {
    assert.deepEqual(failoverStep(new ConnectionWaitTimeoutError('a', 5_000)), { next: 'channel', failure: undefined });
  });
  test('an unusable answer (a 502 of the gateway’s own) moves on; a plain error does not', () => {
    assert.equal(failoverStep(new GatewayError(502, 'server_error', 'malformed')).next, 'channel');
    assert.equal(failoverStep(new GatewayError(400, 'invalid_request_error', 'bad')).next, 'none');
    assert.equal(failoverStep(new TypeError('bug')).next, 'none');
  });
  test('work surely not started is a refusal or no connection; a timeout waiting for the answer may hide work', () => {
    assert.equal(surelyNotStarted(http(503)), true);
    assert.equal(surelyNotStarted(coded('ECONNREFUSED')), true);
    assert.equal(surelyNotStarted(coded('UND_ERR_HEADERS_TIMEOUT')), false);
    assert.equal(surelyNotStarted(coded('ECONNRESET')), false);
  });
});

describe('callWithFailover', () => {
  const model = { id: 'm' } as ResolvedModel;
  const attempt = (channel: string, keyId: string | null = null): Attempt =>
    ({ route: { channel, upstreamModel: channel, priority: 0, weight: 1, keys: [] }, upstream: { name: channel, keyId } }) as unknown as Attempt;
  const options = (extra: Partial<Parameters<typeof callWithFailover>[3]> = {}) => ({
    health: alwaysAvailable,
    maxAttempts: 5,
    signal: new AbortController().signal,
    ...extra,
  });

  test('a refused key tries the same channel’s next key; a 5xx skips the rest of that channel', async () => {
    const tried: string[] = [];
    const plan = [attempt('a', 'k1'), attempt('a', 'k2'), attempt('a', 'k3'), attempt('b')];
    const failures: Record<string, unknown> = { 'a:k1': http(401), 'a:k2': http(500) };
    const served = await callWithFailover(
      model,
      plan,
      async (view) => {
        const name = `${view.upstream.name}:${view.upstream.keyId}`;
        tried.push(name);
        if (failures[name]) throw failures[name];
        return name;
      },
      options(),
    );
    assert.deepEqual(tried, ['a:k1', 'a:k2', 'b:null']);
    assert.deepEqual([served.result, served.attempts], ['b:null', 3]);
  });

  test('attempts stop at max_attempts and the last error is thrown, naming how many were made', async () => {
    let calls = 0;
    const error = await callWithFailover(
      model,
      [attempt('a'), attempt('b'), attempt('c')],
      async () => {
        calls++;
        throw http(500);
      },
      options({ maxAttempts: 2 }),
    ).catch((e: unknown) => e);
    assert.equal(calls, 2);
    assert.equal((error as { attempts?: number }).attempts, 2);
  });

  test('nothing more is tried once the call’s signal is aborted (its deadline, or the caller gone)', async () => {
    const controller = new AbortController();
    let calls = 0;
    await assert.rejects(
      callWithFailover(
        model,
        [attempt('a'), attempt('b')],
        async () => {
          calls++;
          controller.abort(new Error('deadline'));
          throw coded('ECONNRESET');
        },
        options({ signal: controller.signal }),
      ),
    );
    assert.equal(calls, 1);
  });

  test('channels and keys health has taken out are passed over; with none left the call is not sent at all', async () => {
    const health: RouteHealth = { ...alwaysAvailable, channelAvailable: (c) => c !== 'a', keyAvailable: (_c, k) => k !== 'kb1', nextAvailableAt: () => 12_345 };
    const served = await callWithFailover(
      model,
      [attempt('a'), attempt('b', 'kb1'), attempt('b', 'kb2')],
      async (view) => view.upstream.keyId,
      options({ health }),
    );
    assert.deepEqual([served.result, served.attempts], ['kb2', 1]);
    const none: RouteHealth = { ...alwaysAvailable, channelAvailable: () => false, nextAvailableAt: () => 12_345 };
    const error = await callWithFailover(model, [attempt('a')], async () => 'sent', options({ health: none })).catch((e: unknown) => e);
    assert.ok(error instanceof NoChannelAvailableError && error.retryAtMs === 12_345);
  });

  /** A breaker with channel `a` opened by three failures and now half-open. */
  const halfOpenA = (channels: Record<string, string[]> = { a: [] }) => {
    const health = createRouteHealth({ failuresToOpen: 3, cooldownMs: 50, maxCooldownMs: 1_000, rateLimitRestMs: 500, channels });
    for (let i = 0; i < 3; i++) health.failed({ channel: 'a', keyId: null }, { kind: 'unreachable' }, Date.now() - 50);
    return health;
  };
  /** A call that waits for its own release, so a probe can be held in flight. */
  const held = () => {
    let release!: (outcome: 'ok' | 'fail') => void;
    const outcome = new Promise<'ok' | 'fail'>((resolve) => {
      release = resolve;
    });
    return {
      release,
      call: async (view: ResolvedModel) => {
        if ((await outcome) === 'fail') throw coded('ECONNREFUSED');
        return view.upstream.name;
      },
    };
  };

  test('callers arriving while a half-open channel’s probe is in flight wait for it, and are all served once it succeeds', async () => {
    const health = halfOpenA();
    const probe = held();
    const probing = callWithFailover(model, [attempt('a')], probe.call, options({ health }));
    const sent: string[] = [];
    const burst = Array.from({ length: 5 }, () =>
      callWithFailover(
        model,
        [attempt('a')],
        async (view) => {
          sent.push(view.upstream.name);
          return 'served';
        },
        options({ health }),
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(sent, []); // held back while the probe is out, not refused
    probe.release('ok');
    assert.equal((await probing).result, 'a');
    const served = await Promise.all(burst);
    assert.deepEqual(
      served.map((s) => [s.result, s.attempts]),
      Array.from({ length: 5 }, () => ['served', 1]),
    );
  });

  test('callers arriving while a probe is in flight go to another channel when there is one', async () => {
    const health = halfOpenA({ a: [], b: [] });
    const probe = held();
    const probing = callWithFailover(model, [attempt('a'), attempt('b')], probe.call, options({ health }));
    const served = await callWithFailover(model, [attempt('a'), attempt('b')], async (view) => view.upstream.name, options({ health }));
    assert.equal(served.result, 'b');
    probe.release('ok');
    await probing;
  });

  test('callers waiting on a probe that fails get no channel available, with the re-opened circuit’s end as the retry time', async () => {
    const health = halfOpenA();
    const probe = held();
    const probing = callWithFailover(model, [attempt('a')], probe.call, options({ health })).catch((e: unknown) => e);
    const waiting = callWithFailover(model, [attempt('a')], async () => 'sent', options({ health })).catch((e: unknown) => e);
    probe.release('fail');
    await probing;
    const error = await waiting;
    assert.ok(error instanceof NoChannelAvailableError);
    assert.ok(error.retryAtMs !== undefined && error.retryAtMs > Date.now());
  });

  test('a probe that does not come back within the wait leaves the waiting caller with no channel available', async () => {
    const health = halfOpenA();
    const probe = held();
    const probing = callWithFailover(model, [attempt('a')], probe.call, options({ health }));
    const error = await callWithFailover(model, [attempt('a')], async () => 'sent', options({ health, probeWaitMs: 30 })).catch((e: unknown) => e);
    assert.ok(error instanceof NoChannelAvailableError && error.retryAtMs === undefined);
    probe.release('ok');
    await probing;
  });

  test('an attempt on the channel and key the model resolved to is served by the resolved model itself; another by its own view', async () => {
    const first = attempt('a', 'k1');
    const resolved = { id: 'm', upstream: first.upstream, upstreamModel: first.route.upstreamModel } as ResolvedModel;
    const views: ResolvedModel[] = [];
    const failing = async (view: ResolvedModel) => {
      views.push(view);
      if (views.length === 1) throw http(401);
      return 'ok';
    };
    await callWithFailover(resolved, [first, attempt('a', 'k2')], failing, options());
    assert.equal(views[0], resolved);
    assert.notEqual(views[1], resolved);
    assert.deepEqual([views[1]!.id, views[1]!.upstream.keyId, views[1]!.upstreamModel], ['m', 'k2', 'a']);
    assert.equal(resolved.upstream.keyId, 'k1'); // the resolved model is never changed by a view
  });
});
