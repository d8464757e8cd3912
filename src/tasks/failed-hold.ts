// How a failed task's hold ends. The caller pays nothing either way; a kind whose every call is
// on record (subtitle erase, spec 4.5) keeps a usage row of 0, the rest simply get it all back.
import type { Kysely } from 'kysely';
import { releaseHoldIn, settleHoldIn } from '../billing/ledger.js';
import type { DB } from '../store/schema.js';
import type { TaskKindHandler } from './types.js';

export async function endFailedTaskHold(
  trx: Kysely<DB>,
  { holdId, handler, requestId, note, now }: { holdId: string; handler: TaskKindHandler; requestId?: string; note: string; now?: number },
): Promise<void> {
  if (handler.failedUseUnits) {
    // Nothing charged, but the call is on record as a successful one is (a usage row of 0).
    await settleHoldIn(trx, holdId, { chargeMicros: 0, units: handler.failedUseUnits, flags: ['failed'], requestId, now });
    return;
  }
  // release, not settle: a failed task produced nothing the account asked for
  await releaseHoldIn(trx, holdId, { note, now });
}
