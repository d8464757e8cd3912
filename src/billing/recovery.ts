// Holds whose call died with its instance (a crash, a kill -9): any instance ends them, within a
// minute of the death, from what the call recorded. A stream that recorded delivered output is
// billed for it; anything else is released. Running idempotency records of the dead instance are
// freed, so a retry with the same key runs again.

import { type HoldRow, listOrphanedHolds } from '../store/holds.js';
import { releaseRunningOfDeadInstances } from '../store/idempotency.js';
import { removeDeadInstances } from '../store/instances.js';
import type { Store } from '../store/open.js';
import { releaseHold, settleHold } from './ledger.js';
import { storeKeepsPriceList } from './price-lists.js';
import type { SettlementMetrics } from './settlements.js';

export interface RecoveryLogger {
  info(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/** What a stream wrote into `holds.progress`: the units delivered so far, what they cost, and at which price list. */
export interface RecordedProgress {
  units: Record<string, number>;
  charge_micros: number;
  /** The call's price list (price-lists.ts); absent in progress recorded before lists were kept. */
  price_id?: string;
}

export function parseProgress(text: string | null): RecordedProgress | undefined {
  if (!text) return undefined;
  try {
    const progress = JSON.parse(text) as RecordedProgress;
    return Number.isSafeInteger(progress.charge_micros) && progress.charge_micros >= 0 ? progress : undefined;
  } catch {
    return undefined;
  }
}

export interface RecoveryOptions {
  /** An instance silent since before this instant is dead. */
  heartbeatBefore: number;
  /** Holds from before instances existed: ended once older than the longest call. */
  legacyCreatedBefore: number;
  log: RecoveryLogger;
  /** Where a recovered charge is counted, as every charge is (the billed total in /metrics). */
  metrics?: SettlementMetrics;
}

const BATCH = 200;

async function endOrphan(store: Store, hold: HoldRow, metrics: SettlementMetrics | undefined): Promise<'settled' | 'released' | 'gone'> {
  const progress = parseProgress(hold.progress);
  if (progress && progress.charge_micros > 0) {
    // The usage row names the stream's price list when the store keeps it: a call that died before
    // its settle may not have written a list new to its process. Otherwise the row names none.
    const priceId = progress.price_id && (await storeKeepsPriceList(store, progress.price_id)) ? progress.price_id : undefined;
    const settled = await settleHold(store, hold.id, { chargeMicros: progress.charge_micros, units: progress.units, flags: ['recovered'], priceId });
    if (!settled.applied) return 'gone';
    metrics?.addBilled(hold.model, settled.chargedMicros);
    if (settled.unbilledMicros > 0) metrics?.addUnbilled(hold.model, settled.unbilledMicros);
    return 'settled';
  }
  const { applied } = await releaseHold(store, hold.id, { note: 'recovered: its instance stopped before the call ended' });
  return applied ? 'released' : 'gone';
}

export async function endOrphanedHolds(store: Store, options: RecoveryOptions): Promise<{ settled: number; released: number }> {
  const counts = { settled: 0, released: 0 };
  for (;;) {
    const holds = await listOrphanedHolds(store.db, {
      heartbeatBefore: options.heartbeatBefore,
      legacyCreatedBefore: options.legacyCreatedBefore,
      limit: BATCH,
    });
    let failures = 0;
    for (const hold of holds) {
      try {
        const ended = await endOrphan(store, hold, options.metrics);
        if (ended !== 'gone') counts[ended] += 1;
      } catch (error) {
        failures += 1;
        options.log.error({ err: error, holdId: hold.id }, 'ending an orphaned hold failed; the next sweep retries');
      }
    }
    // A full batch goes round again, unless it failed (the store refuses): then the next sweep does.
    if (holds.length < BATCH || failures > 0) break;
  }
  const freedKeys = await releaseRunningOfDeadInstances(store.db, { heartbeatBefore: options.heartbeatBefore });
  await removeDeadInstances(store.db, { heartbeatBefore: options.heartbeatBefore });
  if (counts.settled + counts.released + freedKeys > 0)
    options.log.info({ ...counts, freedIdempotencyKeys: freedKeys }, 'ended the holds of stopped instances');
  return counts;
}
