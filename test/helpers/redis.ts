// Finding the test Redis, as helpers/postgres.ts finds PostgreSQL: a suite that needs it is skipped,
// with the reason printed, when it is unreachable, unless CI requires it (then the suite runs and fails).
import { Redis } from 'ioredis';

export const TEST_REDIS_URL = 'redis://127.0.0.1:6379';

/** Undefined when Redis answers a PING, else why not. Fails fast: a missing Redis must not hang the suite. */
export async function redisUnreachableReason(url = TEST_REDIS_URL): Promise<string | undefined> {
  const probe = new Redis(url, { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0, connectTimeout: 1000 });
  let cause: Error | undefined; // connect() only says the connection closed; the 'error' event says why
  probe.on('error', (error: Error) => void (cause ??= error));
  try {
    await probe.connect();
    await probe.ping();
    return undefined;
  } catch (error) {
    return `${url} unreachable (${(cause ?? (error as Error)).message})`;
  } finally {
    probe.disconnect();
  }
}

/** The `skip` option for tests that need Redis: the reason to skip, or false (reachable, or required by CI). */
export async function skipWithoutRedis(suite: string): Promise<string | false> {
  const reason = await redisUnreachableReason();
  if (!reason || process.env.TOLLROUTE_REQUIRE_REDIS === '1') return false;
  console.log(`skipping ${suite}: ${reason}`);
  return reason;
}
