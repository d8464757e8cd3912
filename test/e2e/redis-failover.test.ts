// A gateway whose Redis fails: rate limits go on per instance (never off), answers stay fast, the
// fallback shows in /metrics and in one log line, and the gateway returns to Redis by itself.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { request } from 'undici';
import { ADMIN_AUTH, eventually, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { skipWithoutRedis } from '../helpers/redis.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

/** `/v1/models` `count` times in a row: statuses, Retry-After of the 429s, and the slowest answer. */
async function listModels(gw: TestGateway, key: string, count: number) {
  const statuses: number[] = [];
  const retryAfter = new Set<string>();
  let slowestMs = 0;
  for (let i = 0; i < count; i++) {
    const startedAt = performance.now();
    const res = await request(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
    await res.body.dump();
    slowestMs = Math.max(slowestMs, performance.now() - startedAt);
    statuses.push(res.statusCode);
    if (res.statusCode === 429) retryAfter.add(String(res.headers['retry-after']));
  }
  return { statuses, retryAfter: [...retryAfter], slowestMs };
}

const skip = await skipWithoutRedis('a gateway whose Redis stops answering');

const degradedGauge = async (gw: TestGateway) =>
  /^tollroute_rate_limiter_degraded (\d)$/m.exec(await (await request(`${gw.url}/metrics`, ADMIN_AUTH)).body.text())?.[1];
const logged = (gw: TestGateway, pattern: RegExp) => gw.logs.filter((line) => pattern.test(String(line.msg))).length;

describe('rate limits when Redis fails', () => {
  const gateways: TestGateway[] = [];
  after(async () => {
    for (const gw of gateways) await gw.close();
  });

  test('with Redis on a closed port, rpm 5 admits 5 of 15 at once, and /metrics says degraded', async () => {
    const gw = await startTestGateway({ limits: { redis: 'redis://127.0.0.1:1' } });
    gateways.push(gw);
    const { key } = await gw.account({ rpm: 5 });
    const { statuses, retryAfter, slowestMs } = await listModels(gw, key, 15);
    assert.deepEqual(statuses, [...Array(5).fill(200), ...Array(10).fill(429)]);
    assert.deepEqual(retryAfter, ['12'], 'rpm 5: the next token in 12 s');
    // before, each request waited for Redis's timeout (0.35–1 s); the margin is for a busy machine
    assert.ok(slowestMs < 400, `slowest answer ${slowestMs} ms`);
    assert.equal(await degradedGauge(gw), '1');
    assert.equal(logged(gw, /rate limiter degraded/), 1);
  });

  test('a Redis that stops answering: limits per instance, then shared again when it answers', { skip }, async () => {
    let proxy: TcpProxy | undefined = await startTcpProxy({ host: '127.0.0.1', port: 6379 });
    try {
      const gw = await startTestGateway({ limits: { redis: `redis://127.0.0.1:${proxy.port}`, redis_probe_ms: 200 } });
      gateways.push(gw);
      const { key } = await gw.account({ rpm: 4 });
      // the first take connects and loads the script; on a busy machine that may outlast the timeout
      await eventually(async () => (await listModels(gw, (await gw.account({ rpm: 1_000 })).key, 1)) && (await degradedGauge(gw)) === '0', 10_000);
      const warnings = logged(gw, /rate limiter degraded/);

      proxy.freeze();
      const frozen = await listModels(gw, key, 8);
      assert.deepEqual(frozen.statuses, [200, 200, 200, 200, 429, 429, 429, 429]);
      assert.ok(frozen.slowestMs < 1_000, `slowest answer ${frozen.slowestMs} ms: the first waits for the 200 ms timeout, none after it`);
      assert.equal(await degradedGauge(gw), '1');

      proxy.thaw();
      await eventually(async () => (await degradedGauge(gw)) === '0', 10_000);
      assert.equal(logged(gw, /rate limiter degraded/) - warnings, 1);
      assert.equal(logged(gw, /rate limiter recovered/) >= 1, true);
      // shared again: the key's Redis bucket gave one token before the breaker opened (the take that
      // timed out ran when the held bytes arrived), so 3 are left there
      assert.deepEqual((await listModels(gw, key, 4)).statuses, [200, 200, 200, 429]);
    } finally {
      await proxy?.close();
      proxy = undefined;
    }
  });
});
