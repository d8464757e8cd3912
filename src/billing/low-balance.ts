// Low-balance notices: an account's funds (balance + held) falling below its threshold are told
// once per crossing, by one signed `account.balance_low` event to the account's webhook_url. The
// crossing is marked (accounts.low_balance_since) and its event queued in the webhook outbox in
// one transaction, by a conditional update only one instance can win; funds back at or above
// the threshold (a credit, a lower threshold) end the mark, so the next crossing is told again.
// Funds count held money as the account's: a hold taken and released again is no crossing, so
// calls running near the threshold never make the notice come and go.
import { newId } from '../store/ids.js';
import { clearRecovered, type LowBalanceRow, markCrossing, unmarkedCrossings } from '../store/low-balance.js';
import type { Store } from '../store/open.js';
import { enqueueWebhook } from '../store/webhook-outbox.js';

export const BALANCE_LOW_EVENT = 'account.balance_low';

/** Crossings told per sweep at most: the rest wait for the next one. */
const CROSSINGS_PER_SWEEP = 500;

/** Whether the account's funds are below its threshold now. */
export const isBalanceLow = (row: { balance_micros: number; held_micros: number; low_balance_micros: number | null }): boolean =>
  row.low_balance_micros !== null && row.balance_micros + row.held_micros < row.low_balance_micros;

/** The event's body, signed and sent as it stands (webhooks/send.ts). */
export function balanceLowPayload(row: LowBalanceRow, { eventId, now }: { eventId: string; now: number }) {
  return {
    event_id: eventId,
    type: BALANCE_LOW_EVENT,
    livemode: row.livemode !== 0,
    created_at: Math.floor(now / 1000),
    data: {
      account_id: row.id,
      balance_micros: row.balance_micros,
      held_micros: row.held_micros,
      threshold_micros: row.low_balance_micros!,
    },
  };
}

/**
 * Marks the account's crossing and queues its event, together or not at all. False when there
 * was none to mark (another instance did, or the funds are no longer below). Without a
 * webhook_url the crossing is marked all the same (the console's banner, the operator's list).
 */
async function noticeCrossing(store: Store, accountId: string, now: number): Promise<boolean> {
  return store.db.transaction().execute(async (trx) => {
    const row = await markCrossing(trx, { accountId, now });
    if (!row) return false;
    if (row.webhook_url !== null) {
      const eventId = newId('evt');
      const payload = JSON.stringify(balanceLowPayload(row, { eventId, now }));
      // The outbox row's task_id names what the event is about: here the account.
      await enqueueWebhook(trx, { accountId: row.id, taskId: row.id, eventId, url: row.webhook_url, payload, now });
    }
    return true;
  });
}

export interface LowBalanceSweep {
  /** Accounts whose crossing was marked (and told, with a webhook_url) by this sweep. */
  noticed: string[];
  /** Accounts whose mark ended: funds back at or above the threshold. */
  cleared: string[];
}

/** Ends the crossings that are over, then marks and tells the new ones: of every account, or of one. */
export async function noticeLowBalances(store: Store, { accountId, now = Date.now() }: { accountId?: string; now?: number } = {}): Promise<LowBalanceSweep> {
  const cleared = await clearRecovered(store.db, { accountId });
  const noticed: string[] = [];
  for (const id of await unmarkedCrossings(store.db, { accountId, limit: CROSSINGS_PER_SWEEP })) {
    if (await noticeCrossing(store, id, now)) noticed.push(id);
  }
  return { noticed, cleared };
}

export interface LowBalanceLog {
  info(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

/** The sweep every `intervalMs` on each instance; the store's conditional mark makes one of them tell each crossing. */
export function createLowBalanceSweeper({ store, intervalMs, log }: { store: Store; intervalMs: number; log: LowBalanceLog }) {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;

  async function sweep(): Promise<void> {
    try {
      const { noticed, cleared } = await noticeLowBalances(store);
      // Ids only: the webhook URL may carry the receiver's token.
      if (noticed.length > 0) log.info({ accounts: noticed }, 'balance below the low-balance threshold: notice queued');
      if (cleared.length > 0) log.info({ accounts: cleared }, 'balance back at or above the low-balance threshold');
    } catch (error) {
      // The next sweep tries again; nothing is marked without its event.
      log.error({ error: error instanceof Error ? error.message : String(error) }, 'low-balance sweep failed');
    }
  }

  return {
    start() {
      if (timer) return;
      timer = setInterval(() => {
        running ??= sweep().finally(() => {
          running = undefined;
        });
      }, intervalMs).unref();
    },
    async stop() {
      clearInterval(timer);
      timer = undefined;
      await running;
    },
  };
}
