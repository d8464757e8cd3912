// Holds left open by an instance that died mid-call: after the longest a call can run, no live
// request owns them any more. They are released: the gateway cannot prove what was delivered.
import { findStaleHolds, releaseHold } from './ledger.js';
import type { Store } from '../store/open.js';

export interface RecoveryLogger {
  info(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export async function releaseStaleHolds(store: Store, { olderThanMs, log, now = Date.now() }: { olderThanMs: number; log: RecoveryLogger; now?: number }): Promise<number> {
  let released = 0;
  for (const hold of await findStaleHolds(store, { olderThanMs, now })) {
    try {
      const { applied } = await releaseHold(store, hold.id, { note: 'recovered: open past the request timeout' });
      if (applied) released += 1;
    } catch (error) {
      log.error({ err: error, holdId: hold.id }, 'releasing a stale hold failed');
    }
  }
  if (released > 0) log.info({ released }, 'released stale holds');
  return released;
}
