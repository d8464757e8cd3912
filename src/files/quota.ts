// An account's files take at most `files.max_bytes_per_account`: the check that admits an upload's
// row runs in one transaction with the account row locked, so two uploads finishing at once cannot
// both fit into the room that only one of them fits.
import type { Insertable } from 'kysely';
import { lockAccount } from '../store/accounts.js';
import { accountFileBytes, insertFile } from '../store/files.js';
import type { Store } from '../store/open.js';
import type { FilesTable } from '../store/schema.js';

export type QuotaOutcome = { stored: true } | { stored: false; usedBytes: number };

export async function storeFileWithinQuota(
  store: Store,
  { row, quotaBytes, now }: { row: Insertable<FilesTable>; quotaBytes: number; now: number },
): Promise<QuotaOutcome> {
  return store.db.transaction().execute(async (trx) => {
    // The lock serialises one account's uploads (PostgreSQL row lock; SQLite has one writer anyway).
    await lockAccount(trx, row.account_id);
    const usedBytes = await accountFileBytes(trx, { accountId: row.account_id, now });
    if (usedBytes + Number(row.bytes) > quotaBytes) return { stored: false, usedBytes };
    await insertFile(trx, row);
    return { stored: true };
  });
}
