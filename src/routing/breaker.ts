// Channel health: a circuit breaker per channel and per (channel, key), the operator's switch, and
// each one's recent figures for the admin view.
//
// Which circuit a failure counts against: no answer or a 5xx is the channel's, whichever key it
// carried (counting it on the key as well would take out keys that are fine and leave a recovered
// channel nothing to probe through); a refused key (401/403) opens that key at once and says
// nothing of the channel; a 429 rests that key for its Retry-After (its newest, never longer) and
// is nobody's failure.
//
// Each gateway instance keeps its own view, in memory, on purpose. A channel failing on one
// instance's network path need not be out for another; an instance learns of a failing channel
// from its own first few calls to it (`failures_to_open`), which costs a handful of failed-over
// attempts, never a caller's answer; and views converge within a cool-down, as each instance's own
// probe finds the channel well again. Sharing it through Redis would add a round trip to every
// attempt and a new way to fail (Redis down must not take channels out) for little gain.
import { Circuit, type CircuitState, type CircuitTiming, type Transition } from './circuit.js';
import type { AttemptFailure, RouteHealth } from './health.js';
import { RollingStats, type StatsView } from './health-stats.js';

export type AttemptOutcome = 'ok' | AttemptFailure['kind'] | 'released';

export interface HealthObserver {
  /** Every attempt's outcome, for the per-channel counters. */
  attempt?(channel: string, outcome: AttemptOutcome): void;
  /** A circuit changed state (opened, half-open probe closed it…), for the log. */
  transition?(target: { channel: string; keyId: string | null }, transition: Transition): void;
}

export interface BreakerOptions extends CircuitTiming {
  /** False: failures are counted and shown, but take nothing out (routing.circuit_breaker). */
  trips?: boolean;
  /** How long a 429 without Retry-After rests its key. */
  rateLimitRestMs: number;
  /** Each channel's keys by fingerprint, so the view lists keys not used yet and a channel with all its keys out is known as out. */
  channels: Record<string, string[]>;
  observer?: HealthObserver;
}

export type ChannelState = CircuitState | 'disabled';

export interface KeyHealthView {
  /** The key's fingerprint (first 8 hex of its sha256): never the key, nor any part of it. */
  key: string;
  state: CircuitState;
  requests: number;
  error_rate: number;
  rested_until: string | null;
}

export interface ChannelHealthView extends StatsView {
  state: ChannelState;
  opens_until: string | null;
  keys: KeyHealthView[];
}

export interface ChannelHealth extends RouteHealth {
  /** The operator's switch, in force at once; false when no channel has that name. */
  setDisabled(channel: string, disabled: boolean): boolean;
  view(channel: string, now?: number): ChannelHealthView | undefined;
  /** Each known channel's state, for the metrics gauge. */
  states(now?: number): { channel: string; state: ChannelState }[];
  /**
   * A reloaded configuration's settings and channels: a channel (or key) that stays keeps its
   * state, disabled included; one that left is forgotten, and a new one starts closed.
   */
  reconfigure(settings: Omit<BreakerOptions, 'observer'>): void;
}

interface Tracked {
  circuit: Circuit;
  stats: RollingStats;
}

interface ChannelEntry extends Tracked {
  disabled: boolean;
  keys: Map<string, Tracked>;
}

const iso = (at: number | undefined) => (at === undefined ? null : new Date(at).toISOString());

/** What the view says of a failure: the gateway's words, never an upstream's body or a key. */
function describe(failure: AttemptFailure, restMs: number): string {
  switch (failure.kind) {
    case 'unreachable':
      return 'no answer: connection refused, reset or timed out';
    case 'server_error':
      return `upstream answered ${failure.status}`;
    case 'key_refused':
      return `upstream refused the key (${failure.status})`;
    case 'rate_limited':
      return `upstream rate-limited the key (429); rested ${restMs} ms`;
  }
}

export function createRouteHealth(options: BreakerOptions, clock: () => number = Date.now): ChannelHealth {
  // One timing object shared by every circuit, so a reload's new settings reach the circuits that stay.
  const timing: CircuitTiming = { failuresToOpen: options.failuresToOpen, cooldownMs: options.cooldownMs, maxCooldownMs: options.maxCooldownMs };
  let rateLimitRestMs = options.rateLimitRestMs;
  let trips = options.trips !== false;
  let channels = options.channels;
  const tracked = (): Tracked => ({ circuit: new Circuit(timing), stats: new RollingStats() });
  const entries = new Map<string, ChannelEntry>();
  const entryOf = (channel: string): ChannelEntry => {
    let entry = entries.get(channel);
    if (!entry) {
      entry = { ...tracked(), disabled: false, keys: new Map() };
      // A channel a reload removed still hears from the calls that were on it: they are answered
      // from a throwaway entry, so the channel does not come back in the view and the metrics.
      if (channel in channels) entries.set(channel, entry);
    }
    return entry;
  };
  const keyOf = (channel: string, entry: ChannelEntry, keyId: string): Tracked => {
    let key = entry.keys.get(keyId);
    if (!key) {
      key = tracked();
      // Likewise a key a reload took off its channel.
      if (channels[channel]?.includes(keyId)) entry.keys.set(keyId, key);
    }
    return key;
  };
  const track = () => {
    for (const [channel, keyIds] of Object.entries(channels)) for (const keyId of keyIds) keyOf(channel, entryOf(channel), keyId);
  };
  track();

  const observed = (channel: string, keyId: string | null, transition: Transition | undefined) => {
    if (transition) options.observer?.transition?.({ channel, keyId }, transition);
  };
  /** When the channel could take a call again: its own circuit, and the soonest of its keys when it has any. */
  const readyAt = (entry: ChannelEntry, now: number): number | undefined => {
    if (entry.disabled) return undefined; // until the operator says otherwise
    const channelReady = entry.circuit.readyAt(now);
    if (channelReady === undefined || entry.keys.size === 0) return channelReady;
    const keysReady = [...entry.keys.values()].flatMap(({ circuit }) => circuit.readyAt(now) ?? []);
    return keysReady.length === 0 ? undefined : Math.max(channelReady, Math.min(...keysReady));
  };

  return {
    channelAvailable(channel, now) {
      const entry = entryOf(channel);
      return !entry.disabled && entry.circuit.admit(now);
    },

    keyAvailable(channel, keyId, now) {
      const entry = entryOf(channel);
      // Asked just before channelAvailable: a half-open key's probe is taken only when the channel
      // will let the call through too, else the probe would be held by a call never sent.
      if (entry.disabled || !entry.circuit.wouldAdmit(now)) return false;
      return keyOf(channel, entry, keyId).circuit.admit(now);
    },

    succeeded({ channel, keyId }, latencyMs, now) {
      const entry = entryOf(channel);
      entry.stats.succeeded(now, latencyMs);
      observed(channel, null, entry.circuit.succeeded(now));
      if (keyId !== null) {
        const key = keyOf(channel, entry, keyId);
        key.stats.succeeded(now, latencyMs);
        observed(channel, keyId, key.circuit.succeeded(now));
      }
      options.observer?.attempt?.(channel, 'ok');
    },

    failed({ channel, keyId }, failure, now) {
      const entry = entryOf(channel);
      const key = keyId === null ? undefined : keyOf(channel, entry, keyId);
      // A Retry-After beyond the longest cool-down is capped there: the key is tried again by then at the latest.
      const restMs = failure.kind === 'rate_limited' ? Math.min(failure.retryAfterMs ?? rateLimitRestMs, timing.maxCooldownMs) : 0;
      const message = describe(failure, restMs);
      entry.stats.failed(now, message);
      key?.stats.failed(now, message);
      options.observer?.attempt?.(channel, failure.kind);
      if (!trips) {
        entry.circuit.released(now);
        key?.circuit.released(now);
        return;
      }
      // A channel without keys is its own key: what would fall on the key falls on it.
      const keyed = key ?? entry;
      switch (failure.kind) {
        case 'unreachable':
        case 'server_error':
          observed(channel, null, entry.circuit.failed(now));
          key?.circuit.released(now);
          return;
        case 'key_refused':
          observed(channel, keyId, keyed.circuit.failed(now, { atOnce: true }));
          if (key) entry.circuit.released(now);
          return;
        case 'rate_limited':
          keyed.circuit.rest(now + restMs, { exact: failure.retryAfterMs !== undefined });
          entry.circuit.released(now);
          key?.circuit.released(now);
          return;
      }
    },

    released({ channel, keyId }, now) {
      const entry = entryOf(channel);
      entry.circuit.released(now);
      if (keyId !== null) keyOf(channel, entry, keyId).circuit.released(now);
      options.observer?.attempt?.(channel, 'released');
    },

    probeEnded(channels, now) {
      const probes = channels.flatMap((channel) => {
        const entry = entryOf(channel);
        if (entry.disabled) return [];
        return [entry.circuit, ...[...entry.keys.values()].map((key) => key.circuit)].flatMap((circuit) => circuit.probeEnded(now) ?? []);
      });
      return probes.length === 0 ? undefined : Promise.race(probes);
    },

    nextAvailableAt(channels, now) {
      const times = channels.flatMap((channel) => readyAt(entryOf(channel), now) ?? []);
      return times.length === 0 ? undefined : Math.min(...times);
    },

    setDisabled(channel, disabled) {
      if (!(channel in channels)) return false;
      // The breaker's own state is kept: a channel enabled while its circuit is open waits for its probe.
      entryOf(channel).disabled = disabled;
      return true;
    },

    view(channel, now = clock()) {
      const entry = entries.get(channel);
      if (!entry) return undefined;
      return {
        state: entry.disabled ? 'disabled' : entry.circuit.stateAt(now),
        opens_until: iso(entry.circuit.opensUntil(now)),
        ...entry.stats.view(now),
        keys: [...entry.keys].map(([keyId, { circuit, stats }]) => {
          const { requests, error_rate } = stats.view(now);
          return { key: keyId, state: circuit.stateAt(now), requests, error_rate, rested_until: iso(circuit.restsUntil(now)) };
        }),
      };
    },

    states(now = clock()) {
      return [...entries].map(([channel, entry]) => ({ channel, state: entry.disabled ? 'disabled' : entry.circuit.stateAt(now) }));
    },

    reconfigure(settings) {
      Object.assign(timing, { failuresToOpen: settings.failuresToOpen, cooldownMs: settings.cooldownMs, maxCooldownMs: settings.maxCooldownMs });
      rateLimitRestMs = settings.rateLimitRestMs;
      trips = settings.trips !== false;
      channels = settings.channels;
      for (const [channel, entry] of entries) {
        const keyIds = channels[channel];
        if (!keyIds) entries.delete(channel);
        else for (const keyId of entry.keys.keys()) if (!keyIds.includes(keyId)) entry.keys.delete(keyId);
      }
      track();
    },
  };
}
