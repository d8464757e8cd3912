// A closed-loop load generator: `concurrency` workers each send the next request as soon as their
// last one has been read to the end, until `count` requests were sent or `maxMs` has passed.
import { performance } from 'node:perf_hooks';
import type { Pool } from 'undici';

export interface BenchRequest {
  path: string;
  headers: Record<string, string>;
  body: string;
  /** The answer counts as whole only if its last bytes hold this: the protocol's end marker. */
  endMarker: string;
}

export interface LoadOptions {
  count: number;
  concurrency: number;
  /** No new request starts after this; those running finish (bounded by the pool's timeouts). */
  maxMs: number;
}

export interface LoadResult {
  sent: number;
  errors: number;
  firstError: string | undefined;
  elapsedMs: number;
  /** Sorted, successful requests only: to the last byte, and to the first byte of the body. */
  lastByteMs: number[];
  firstByteMs: number[];
}

export async function runLoad(pool: Pool, request: BenchRequest, { count, concurrency, maxMs }: LoadOptions): Promise<LoadResult> {
  const lastByteMs: number[] = [];
  const firstByteMs: number[] = [];
  let sent = 0;
  let errors = 0;
  let firstError: string | undefined;
  const startedAt = performance.now();
  const deadline = startedAt + maxMs;

  async function sendOne(): Promise<void> {
    const t0 = performance.now();
    let firstAt = 0;
    // The end marker may straddle two chunks, never more: the last two are enough to find it.
    let previous: Buffer | undefined;
    let last: Buffer | undefined;
    try {
      const response = await pool.request({ method: 'POST', path: request.path, headers: request.headers, body: request.body });
      for await (const chunk of response.body) {
        if (firstAt === 0) firstAt = performance.now();
        previous = last;
        last = chunk as Buffer;
      }
      const doneAt = performance.now();
      const tail = Buffer.concat([previous, last].filter((b): b is Buffer => b !== undefined)).toString('utf8');
      if (response.statusCode < 200 || response.statusCode >= 300) throw new Error(`status ${response.statusCode}: ${tail.slice(0, 300)}`);
      if (!tail.includes(request.endMarker)) throw new Error(`answer ended without ${JSON.stringify(request.endMarker)}: …${tail.slice(-200)}`);
      lastByteMs.push(doneAt - t0);
      firstByteMs.push(firstAt - t0);
    } catch (error) {
      errors += 1;
      firstError ??= error instanceof Error ? error.message : String(error);
    }
  }

  async function worker(): Promise<void> {
    while (sent < count && performance.now() < deadline) {
      sent += 1;
      await sendOne();
    }
  }

  await Promise.all(Array.from({ length: concurrency }, worker));
  const sort = (values: number[]) => values.sort((a, b) => a - b);
  return { sent, errors, firstError, elapsedMs: performance.now() - startedAt, lastByteMs: sort(lastByteMs), firstByteMs: sort(firstByteMs) };
}

/** Nearest-rank percentile of sorted values; NaN when there are none. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] as number;
}

export interface LatencySummary {
  p50: number;
  p95: number;
  p99: number;
}

export const summarize = (sorted: readonly number[]): LatencySummary => ({
  p50: percentile(sorted, 50),
  p95: percentile(sorted, 95),
  p99: percentile(sorted, 99),
});
