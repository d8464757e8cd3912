// What the operator sees of a channel or key's recent calls: the last WINDOW_SIZE attempts within
// the last WINDOW_MS, so a figure speaks of now and not of the day's average. Observation only:
// the circuit (circuit.ts) decides; these figures never do.

const WINDOW_SIZE = 100;
const WINDOW_MS = 60_000;

export interface StatsView {
  requests: number;
  /** Failed attempts over all attempts in the window (0 when there were none). */
  error_rate: number;
  latency_ms: { p50: number | null; p99: number | null };
  last_error: { message: string; at: string } | null;
}

export class RollingStats {
  // The last WINDOW_SIZE attempts in a ring written in place: every call's attempt is recorded
  // twice (its channel's and its key's), and this way allocates nothing and shifts nothing.
  private readonly at = new Float64Array(WINDOW_SIZE);
  /** A successful attempt's latency; NaN for a failure (a failure's time says little about the upstream). */
  private readonly latencyMs = new Float64Array(WINDOW_SIZE);
  private next = 0;
  private count = 0;
  private lastError: { message: string; at: number } | undefined;

  succeeded(now: number, latencyMs: number): void {
    this.push(now, latencyMs);
  }

  /** `message` is the gateway's own description of what failed: never an upstream body or a key. */
  failed(now: number, message: string): void {
    this.push(now, Number.NaN);
    this.lastError = { message, at: now };
  }

  view(now: number): StatsView {
    let requests = 0;
    let failures = 0;
    const latencies: number[] = [];
    for (let i = 0; i < this.count; i++) {
      if (this.at[i]! <= now - WINDOW_MS) continue;
      requests++;
      const latency = this.latencyMs[i]!;
      if (Number.isNaN(latency)) failures++;
      else latencies.push(latency);
    }
    latencies.sort((a, b) => a - b);
    return {
      requests,
      error_rate: requests === 0 ? 0 : round(failures / requests, 3),
      latency_ms: { p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99) },
      last_error: this.lastError ? { message: this.lastError.message, at: new Date(this.lastError.at).toISOString() } : null,
    };
  }

  private push(at: number, latencyMs: number): void {
    this.at[this.next] = at;
    this.latencyMs[this.next] = latencyMs;
    this.next = (this.next + 1) % WINDOW_SIZE;
    if (this.count < WINDOW_SIZE) this.count++;
  }
}

/** Nearest-rank percentile of sorted values, in whole milliseconds; null when there are none. */
function percentile(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.max(1, Math.ceil(p * sorted.length));
  return Math.round(sorted[rank - 1]!);
}

const round = (value: number, digits: number) => Math.round(value * 10 ** digits) / 10 ** digits;
