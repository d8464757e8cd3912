// The operator's hold on an account's access: suspend it (its keys refused, live and test alike, and
// its console sessions ended), resume it, or end its console sessions alone. Money is untouched:
// calls already running settle as usual, and tasks already submitted finish and are billed.
import { setAccountSuspended } from '../store/accounts.js';
import type { Store } from '../store/open.js';
import { endAccountSessions } from '../store/sessions.js';

export interface AccessChange {
  /** The account and its test twin, if it has one: every id whose keys must be read afresh. */
  accountIds: string[];
  sessionsEnded: number;
}

/** Undefined when there is no such account. */
export async function suspendAccount(store: Store, { accountId, now }: { accountId: string; now: number }): Promise<AccessChange | undefined> {
  return store.db.transaction().execute(async (trx) => {
    const accountIds = await setAccountSuspended(trx, { accountId, suspendedAt: now });
    if (accountIds.length === 0) return undefined;
    return { accountIds, sessionsEnded: await endAccountSessions(trx, { accountIds, now }) };
  });
}

export async function resumeAccount(store: Store, { accountId }: { accountId: string }): Promise<AccessChange | undefined> {
  const accountIds = await setAccountSuspended(store.db, { accountId, suspendedAt: null });
  return accountIds.length === 0 ? undefined : { accountIds, sessionsEnded: 0 };
}

/** Signs the account's holder out of every console session (a lost laptop); its keys keep working. */
export async function endSessionsOf(store: Store, { accountId, now }: { accountId: string; now: number }): Promise<number> {
  return endAccountSessions(store.db, { accountIds: [accountId], now });
}
