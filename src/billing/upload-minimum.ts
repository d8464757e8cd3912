// The money check an upload passes before a byte of its body is read. Nothing is held for it:
// the upload itself is free, and a call that uses it (a translation) holds its full estimate the
// moment the body is in. What the check stops is reading a body, maybe 100 MB of it, for an
// account that could not pay even the smallest charge the call can make, and answering 402 after.
import { billing } from '../errors.js';
import { findAccount } from '../store/accounts.js';
import type { Store } from '../store/open.js';

/** 402 unless the account's spendable balance covers `minimumMicros`; no store read for a minimum of 0. */
export async function requireBalanceFor(store: Store, { accountId, minimumMicros }: { accountId: string; minimumMicros: number }): Promise<void> {
  if (minimumMicros <= 0) return;
  const account = await findAccount(store.db, accountId);
  // Holds come out of the balance alone (the overdraft covers only usage beyond a hold), so the balance is what counts here too.
  if (!account || account.balance_micros < minimumMicros) throw billing();
}
