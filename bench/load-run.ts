// What one load run yields, whichever tool made it (wrk, or the undici fallback).
import { percentile } from './stats.js';

export type LoadTool = 'wrk' | 'undici';

export interface LatencyPercentiles {
  p50: number;
  p90: number;
  p99: number;
  p999: number;
}

export interface LoadRun {
  tool: LoadTool;
  /** Answers received, failed ones included. */
  requests: number;
  seconds: number;
  /** Failed requests: a status of 400 or more, a broken connection, a timeout (and, with undici, an answer without its end marker). */
  errors: number;
  errorKinds: Record<string, number>;
  requestsPerSecond: number;
  /** Time to the last byte of the answer, in ms. */
  latencyMs: LatencyPercentiles;
}

export interface LoadSpec {
  url: string;
  connections: number;
  seconds: number;
}

export const percentiles = (sorted: readonly number[]): LatencyPercentiles => ({
  p50: percentile(sorted, 50),
  p90: percentile(sorted, 90),
  p99: percentile(sorted, 99),
  p999: percentile(sorted, 99.9),
});
