// This gateway process as the store knows it: it registers, heartbeats, and sweeps the holds of
// instances that stopped heartbeating (a crash, a kill -9), so they end within a minute, whoever
// restarts. The heartbeat is also the store's health probe: a write that lands clears an outage.
// It is this instance's lease on its holds, too: others take it for dead once its last heartbeat is
// dead_after_ms old, so it stops taking calls a margin before that (StoreHealth.renewLease) when its
// heartbeats do not land (cut off from the store, or stalled on it), and the settles of the calls it
// answered meanwhile are written when the store takes them, even if a sweep ended their holds
// (late-settle.ts).

import type { StoreHealth } from '../store/health.js';
import { newId } from '../store/ids.js';
import { heartbeat, registerInstance, removeInstance } from '../store/instances.js';
import type { Store } from '../store/open.js';
import { endOrphanedHolds, type RecoveryLogger } from './recovery.js';
import type { SettlementMetrics } from './settlements.js';

export interface InstanceOptions {
  store: Store;
  health: StoreHealth;
  heartbeatMs: number;
  deadAfterMs: number;
  sweepMs: number;
  /** Holds from before instances existed end once older than this (the longest call, plus a margin). */
  legacyHoldAgeMs: number;
  /** Called when a heartbeat lands after the store had failed (pending settlements retry then). */
  onStoreBack(): void;
  log: RecoveryLogger & { warn(obj: object, msg?: string): void };
  /** Where the charges of recovered holds are counted (the billed total in /metrics). */
  metrics?: SettlementMetrics;
  now?: () => number;
}

export interface Instance {
  readonly id: string;
  /** Registers, sweeps once, and starts the heartbeat and sweep timers. */
  start(): Promise<void>;
  /** One sweep now (tests). */
  sweep(): Promise<void>;
  /** Stops the timers and deregisters: call once this instance's holds have all ended. */
  stop(): Promise<void>;
}

// While the store is failing, probe it this often rather than at the heartbeat interval.
const PROBE_MS = 1_000;

/**
 * How long a heartbeat's lease runs: dead_after_ms less a margin (a quarter of it) for the clocks
 * of instances that differ a little and for a sweep already under way when the lease ends.
 */
export const leaseMs = (deadAfterMs: number) => deadAfterMs - Math.ceil(deadAfterMs / 4);

export function createInstance(options: InstanceOptions): Instance {
  const { store, health, log } = options;
  const now = options.now ?? Date.now;
  const id = newId('inst');
  // The instant of this instance's last heartbeat (or registration) that landed in the store.
  let lastBeatAt = 0;
  let beatTimer: NodeJS.Timeout | undefined;
  let sweepTimer: NodeJS.Timeout | undefined;
  let stopped = false;
  let leaseLostLogged = false;

  // The lease runs from when the heartbeat was sent: the instant the store records.
  const landed = (at: number) => {
    lastBeatAt = at;
    leaseLostLogged = false;
    health.renewLease(at + leaseMs(options.deadAfterMs));
  };

  async function beat() {
    try {
      const at = now();
      if (!(await heartbeat(store.db, { id, now: at }))) {
        // Silent long enough that another instance took us for dead (and ended our holds).
        log.warn({ instanceId: id }, 'this instance was taken for dead; registering again');
        await registerInstance(store.db, { id, now: at });
      }
      const wasOk = health.ok;
      landed(at);
      if (!wasOk) {
        health.recovered();
        options.onStoreBack();
      }
    } catch (error) {
      health.failed(error) || log.error({ err: error }, 'heartbeat failed');
      if (!leaseLostLogged && now() >= lastBeatAt + leaseMs(options.deadAfterMs)) {
        leaseLostLogged = true;
        log.error({ instanceId: id, lastBeatAt }, 'no heartbeat landed in time: new calls get 503 before another instance may end this one’s holds');
      }
    }
  }

  function scheduleBeat() {
    if (stopped) return;
    beatTimer = setTimeout(
      async () => {
        await beat();
        scheduleBeat();
      },
      health.ok ? options.heartbeatMs : PROBE_MS,
    );
    beatTimer.unref();
  }

  async function sweep() {
    const at = now();
    // Dead means silent since before our own last heartbeat, too: an instance that sweeps is alive,
    // and when its own heartbeat is late (a starved CPU, a long pause, a slow store) it must not
    // take itself for dead and end the holds of the calls it is still running.
    const heartbeatBefore = Math.min(at - options.deadAfterMs, lastBeatAt);
    try {
      await endOrphanedHolds(store, { heartbeatBefore, legacyCreatedBefore: at - options.legacyHoldAgeMs, log, metrics: options.metrics });
    } catch (error) {
      health.failed(error);
      log.error({ err: error }, 'sweeping the holds of stopped instances failed; the next sweep retries');
    }
  }

  return {
    id,
    async start() {
      const at = now();
      await registerInstance(store.db, { id, now: at });
      landed(at);
      await sweep();
      scheduleBeat();
      sweepTimer = setInterval(() => void sweep(), options.sweepMs);
      sweepTimer.unref();
    },
    sweep,
    async stop() {
      stopped = true;
      clearTimeout(beatTimer);
      clearInterval(sweepTimer);
      await removeInstance(store.db, id).catch((error) => log.error({ err: error }, 'deregistering the instance failed'));
    },
  };
}
