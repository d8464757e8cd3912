// One circuit breaker: closed (calls flow), open (none, for a cool-down), half-open (one probe
// call). A channel has one, and so does each of its keys. Time is always passed in, so tests
// drive it with a clock of their own.
//
// Half-open admits exactly one probe; the callers that come while it is out are not refused for
// good: they may wait for its outcome (`probeEnded`), and a probe that succeeds closes the circuit,
// so every one of them is admitted at once (a burst, not one caller per probe).

export type CircuitState = 'closed' | 'open' | 'half_open';

export interface CircuitTiming {
  /** Consecutive failures that open a closed circuit. */
  failuresToOpen: number;
  /** The first cool-down; each failed probe doubles it, up to `maxCooldownMs`. */
  cooldownMs: number;
  maxCooldownMs: number;
}

export type Transition = { from: CircuitState; to: CircuitState; cooldownMs: number };

export class Circuit {
  private state: CircuitState = 'closed';
  private consecutiveFailures = 0;
  private cooldownMs: number;
  private openUntil = 0;
  /** Half-open: whether the one probe has been let through and has not come back yet. */
  private probeOut = false;
  /** A 429 rests the circuit's subject without counting as a failure. */
  private restedUntil = 0;
  /** Callers waiting for the probe out now to come back, whatever its outcome. */
  private probeWaiters: (() => void)[] = [];

  constructor(private readonly timing: CircuitTiming) {
    this.cooldownMs = timing.cooldownMs;
  }

  /** The state now: an open circuit whose cool-down is over is half-open (lazily, no timers). */
  stateAt(now: number): CircuitState {
    if (this.state === 'open' && now >= this.openUntil) {
      this.state = 'half_open';
      this.probeOut = false;
    }
    return this.state;
  }

  /** Until when it is open (undefined unless open). */
  opensUntil(now: number): number | undefined {
    return this.stateAt(now) === 'open' ? this.openUntil : undefined;
  }

  /** Until when a 429 rests it (undefined once that has passed). */
  restsUntil(now: number): number | undefined {
    return this.restedUntil > now ? this.restedUntil : undefined;
  }

  /** Whether a call could be let through now, without taking the half-open probe. */
  wouldAdmit(now: number): boolean {
    if (this.restedUntil > now) return false;
    const state = this.stateAt(now);
    return state === 'closed' || (state === 'half_open' && !this.probeOut);
  }

  /** Whether a call may go now; a half-open circuit's one probe is taken by the call told yes. */
  admit(now: number): boolean {
    if (!this.wouldAdmit(now)) return false;
    if (this.state === 'half_open') this.probeOut = true;
    return true;
  }

  /** The earliest time a call could be let through (now when it already could; undefined when a probe is out). */
  readyAt(now: number): number | undefined {
    if (this.wouldAdmit(now)) return now;
    const state = this.stateAt(now);
    if (state === 'half_open' && this.probeOut) return undefined; // its probe decides, at no known time
    return Math.max(state === 'open' ? this.openUntil : now, this.restedUntil);
  }

  /** A call came back well: closed again, the cool-down back to its first length. */
  succeeded(now: number): Transition | undefined {
    const from = this.stateAt(now);
    // Open: a call sent before the circuit opened; the probe after the cool-down decides instead.
    if (from === 'open') return undefined;
    this.consecutiveFailures = 0;
    this.cooldownMs = this.timing.cooldownMs;
    this.state = 'closed';
    this.endProbe();
    return from === 'closed' ? undefined : { from, to: 'closed', cooldownMs: 0 };
  }

  /** A call failed; `atOnce` opens a closed circuit without waiting for N failures (a refused key). */
  failed(now: number, { atOnce = false }: { atOnce?: boolean } = {}): Transition | undefined {
    const from = this.stateAt(now);
    if (from === 'open') return undefined; // calls sent before it opened say nothing new
    if (from === 'half_open') {
      // Half-open with no probe out: a call from before the circuit opened, not the probe.
      if (!this.probeOut) return undefined;
      this.cooldownMs = Math.min(this.cooldownMs * 2, this.timing.maxCooldownMs);
      return this.open(now, from);
    }
    this.consecutiveFailures++;
    if (!atOnce && this.consecutiveFailures < this.timing.failuresToOpen) return undefined;
    return this.open(now, from);
  }

  /** A call ended with no verdict on this circuit (the caller left, its own fault): a probe it held is free again. */
  released(now: number): void {
    if (this.stateAt(now) === 'half_open') this.endProbe();
  }

  /**
   * A 429 rests it until `until`. The upstream's own Retry-After (`exact`) is its newest word and
   * replaces an earlier rest, shorter or longer, so a key never rests past what its upstream said
   * last; a 429 that named no time only makes sure of the configured rest.
   */
  rest(until: number, { exact = false }: { exact?: boolean } = {}): void {
    this.restedUntil = exact ? until : Math.max(this.restedUntil, until);
  }

  /** Resolves when the probe out now comes back (success, failure or no verdict); undefined when none is out. */
  probeEnded(now: number): Promise<void> | undefined {
    if (this.stateAt(now) !== 'half_open' || !this.probeOut) return undefined;
    return new Promise((resolve) => this.probeWaiters.push(resolve));
  }

  private endProbe(): void {
    this.probeOut = false;
    const waiters = this.probeWaiters;
    this.probeWaiters = [];
    for (const wake of waiters) wake();
  }

  private open(now: number, from: CircuitState): Transition {
    this.state = 'open';
    this.openUntil = now + this.cooldownMs;
    this.consecutiveFailures = 0;
    this.endProbe();
    return { from, to: 'open', cooldownMs: this.cooldownMs };
  }
}
