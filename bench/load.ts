// The fallback load generator, used when wrk is not installed: a closed loop of undici requests,
// one worker per connection, each sending the next request once its last answer was read to the
// end. It runs in this Node.js process, so at high rates it may be what limits the run; the
// report says which generator was used.
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import { type LoadRun, type LoadSpec, percentiles } from './load-run.js';
import type { BenchRequest } from './scenarios.js';

const TIMEOUT_MS = 10_000;

/** Reads an answer to its end; throws unless it is a 2xx holding the end marker. */
export async function readWhole(pool: Pool, request: BenchRequest): Promise<void> {
  const response = await pool.request({ method: request.method, path: request.path, headers: request.headers, body: request.body });
  // The end marker may straddle two chunks, never more: the last two are enough to find it.
  let previous: Buffer | undefined;
  let last: Buffer | undefined;
  for await (const chunk of response.body) {
    previous = last;
    last = chunk as Buffer;
  }
  const tail = Buffer.concat([previous, last].filter((b): b is Buffer => b !== undefined)).toString('utf8');
  if (response.statusCode < 200 || response.statusCode >= 300) throw new Error(`status ${response.statusCode}: ${tail.slice(0, 300)}`);
  if (!tail.includes(request.endMarker)) throw new Error(`answer ended without ${JSON.stringify(request.endMarker)}: …${tail.slice(-200)}`);
}

export async function runUndiciLoad(request: BenchRequest, spec: LoadSpec & { broken: Promise<never> }): Promise<LoadRun> {
  const pool = new Pool(spec.url, { connections: spec.connections, keepAliveTimeout: 30_000, headersTimeout: TIMEOUT_MS, bodyTimeout: TIMEOUT_MS });
  const latencies: number[] = [];
  const errorKinds: Record<string, number> = {};
  let requests = 0;
  const startedAt = performance.now();
  const deadline = startedAt + spec.seconds * 1000;

  async function worker(): Promise<void> {
    while (performance.now() < deadline) {
      const t0 = performance.now();
      try {
        await readWhole(pool, request);
        latencies.push(performance.now() - t0);
      } catch (error) {
        const kind =
          error instanceof Error && error.message.startsWith('status')
            ? 'status'
            : error instanceof Error && error.message.startsWith('answer')
              ? 'marker'
              : 'other';
        errorKinds[kind] = (errorKinds[kind] ?? 0) + 1;
      }
      requests += 1;
    }
  }

  try {
    await Promise.race([Promise.all(Array.from({ length: spec.connections }, worker)), spec.broken]);
  } finally {
    await pool.destroy();
  }
  const seconds = (performance.now() - startedAt) / 1000;
  return {
    tool: 'undici',
    requests,
    seconds,
    errors: Object.values(errorKinds).reduce((a, b) => a + b, 0),
    errorKinds,
    requestsPerSecond: requests / seconds,
    latencyMs: percentiles(latencies.sort((a, b) => a - b)),
  };
}
