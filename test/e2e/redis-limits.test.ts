// Rate limits shared through Redis: two gateways, one bucket per key.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { request } from 'undici';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const REDIS_URL = process.env.TOLLROUTE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

async function redisUnreachable(): Promise<string | undefined> {
  const client = new Redis(REDIS_URL, {
    lazyConnect: true,
    connectTimeout: 2000,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.ping();
    return undefined;
  } catch (error) {
    return `${REDIS_URL} unreachable (${(error as Error).message})`;
  } finally {
    client.disconnect();
  }
}

const reason = await redisUnreachable();
if (reason && process.env.TOLLROUTE_REQUIRE_REDIS === '1') {
  test('Redis is reachable (TOLLROUTE_REQUIRE_REDIS=1)', () => assert.fail(reason));
} else if (reason) {
  console.log(`skipping Redis gateway tests: ${reason}`);
}

describe('rate limits through Redis', { skip: reason }, () => {
  const gateways: TestGateway[] = [];
  after(async () => {
    for (const gw of gateways) await gw.close();
  });

  test("two gateways on one Redis share a key's requests per minute", async () => {
    const first = await startTestGateway({ limits: { redis: REDIS_URL } });
    gateways.push(first);
    const { key } = await first.account({ rpm: 3 });
    // The second gateway shares the first one's store file, as instances share a database.
    const second = await startTestGateway({ limits: { redis: REDIS_URL }, store: first.storeUrl });
    gateways.push(second);
    const models = async (gw: TestGateway) => {
      const res = await request(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
      await res.body.dump();
      return res.statusCode;
    };
    const chat = async (gw: TestGateway) => {
      const res = await request(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'sandbox-chat', messages: [{ role: 'user', content: 'hi' }] }),
      });
      const body = (await res.body.json()) as any;
      return res.statusCode === 429 ? body : res.statusCode;
    };
    // Reads count too: one models list and two chats use up the three requests.
    assert.equal(await models(first), 200);
    assert.deepEqual([await chat(second), await chat(first)], [200, 200]);
    assert.deepEqual(await chat(second), { error: 'rate limit exceeded', type: 'rate_limit_error' });
  });
});
