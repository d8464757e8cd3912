// What the operator sees of a channel or key's recent calls: the last WINDOW_SIZE attempts within
// the last WINDOW_MS, so a figure speaks of now and not of the day's average. Observation only:
// the circuit (circuit.ts) decides; these figures never do.

const WINDOW_SIZE = 100;
const WINDOW_MS = 60_000;

interface Outcome {
  at: number;
  ok: boolean;
  /** Only successful attempts carry a latency (a failure's time says little about the upstream). */
  latencyMs: number | undefined;
}

export interface StatsView {
  requests: number;
  /** Failed attempts over all attempts in the window (0 when there were none). */
  error_rate: number;
  latency_ms: { p50: number | null; p99: number | null };
  last_error: { message: string; at: string } | null;
}

export class RollingStats {
  private outcomes: Outcome[] = [];
  private lastError: { message: string; at: number } | undefined;

  succeeded(now: number, latencyMs: number): void {
    this.push({ at: now, ok: true, latencyMs });
  }

  /** `message` is the gateway's own description of what failed: never an upstream body or a key. */
  failed(now: number, message: string): void {
    this.push({ at: now, ok: false, latencyMs: undefined });
    this.lastError = { message, at: now };
  }

  view(now: number): StatsView {
    const recent = this.outcomes.filter((outcome) => outcome.at > now - WINDOW_MS);
    const failures = recent.filter((outcome) => !outcome.ok).length;
    const latencies = recent.flatMap((outcome) => (outcome.latencyMs === undefined ? [] : [outcome.latencyMs])).sort((a, b) => a - b);
    return {
      requests: recent.length,
      error_rate: recent.length === 0 ? 0 : round(failures / recent.length, 3),
      latency_ms: { p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99) },
      last_error: this.lastError ? { message: this.lastError.message, at: new Date(this.lastError.at).toISOString() } : null,
    };
  }

  private push(outcome: Outcome): void {
    this.outcomes.push(outcome);
    if (this.outcomes.length > WINDOW_SIZE) this.outcomes.shift();
  }
}

/** Nearest-rank percentile of sorted values, in whole milliseconds; null when there are none. */
function percentile(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.max(1, Math.ceil(p * sorted.length));
  return Math.round(sorted[rank - 1]!);
}

const round = (value: number, digits: number) => Math.round(value * 10 ** digits) / 10 ** digits;
