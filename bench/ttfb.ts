// Time to first byte at one connection, which wrk does not report: one request at a time over a
// kept-alive connection, timing the response headers and the first byte of the body. TTFB in
// the report is the first body byte: for a stream, when the caller sees the answer begin.
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import type { BenchRequest } from './scenarios.js';
import { percentile } from './stats.js';

/** The first few requests open the connection and warm it; they are not counted. */
const UNCOUNTED = 5;
/** A run ends after this many counted requests even before its time is up. */
const MAX_REQUESTS = 2_000;

export interface TtfbFigures {
  requests: number;
  errors: number;
  headersMs: { p50: number; p99: number };
  firstByteMs: { p50: number; p99: number };
}

interface Timing {
  headersMs: number;
  firstByteMs: number;
}

function timeOne(agent: http.Agent, origin: URL, request: BenchRequest): Promise<Timing> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let headersAt = 0;
    let firstByteAt = 0;
    const req = http.request(
      { host: origin.hostname, port: origin.port, method: request.method, path: request.path, headers: request.headers, agent },
      (res) => {
        headersAt = performance.now();
        res.once('data', () => (firstByteAt = performance.now()));
        res.on('data', () => {}); // read the rest, so the connection is free for the next request
        res.once('error', reject);
        res.once('end', () => {
          const status = res.statusCode ?? 0;
          if (status < 200 || status >= 300) reject(new Error(`status ${status}`));
          else resolve({ headersMs: headersAt - t0, firstByteMs: (firstByteAt || performance.now()) - t0 });
        });
      },
    );
    req.once('error', reject);
    req.end(request.body);
  });
}

export async function measureTtfb(url: string, request: BenchRequest, { seconds, broken }: { seconds: number; broken: Promise<never> }): Promise<TtfbFigures> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const origin = new URL(url);
  const timings: Timing[] = [];
  let errors = 0;
  let sent = 0;
  const deadline = performance.now() + seconds * 1000;
  try {
    while (sent < MAX_REQUESTS + UNCOUNTED && (performance.now() < deadline || sent < UNCOUNTED + 1)) {
      sent += 1;
      // A failed request is counted; a void run (a target died) ends the measurement.
      const outcome = await Promise.race([timeOne(agent, origin, request).catch((error: Error) => error), broken]);
      if (outcome instanceof Error) errors += 1;
      else if (sent > UNCOUNTED) timings.push(outcome);
    }
  } finally {
    agent.destroy();
  }
  const sorted = (pick: (t: Timing) => number) => timings.map(pick).sort((a, b) => a - b);
  const headers = sorted((t) => t.headersMs);
  const firstByte = sorted((t) => t.firstByteMs);
  return {
    requests: timings.length,
    errors,
    headersMs: { p50: percentile(headers, 50), p99: percentile(headers, 99) },
    firstByteMs: { p50: percentile(firstByte, 50), p99: percentile(firstByte, 99) },
  };
}
