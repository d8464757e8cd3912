// Queries on the redemption tables (redemption-tables.ts): batches and their hashed codes, the
// claim that redeems a code once, and the per-account count of tries that credited nothing.
import { type Kysely, type Selectable, sql } from 'kysely';
import type { RedemptionBatchesTable } from './redemption-tables.js';
import type { DB } from './schema.js';

export type RedemptionBatchRow = Selectable<RedemptionBatchesTable>;

/** Rows per insert of codes: well under either dialect's limit of bound parameters. */
const CODES_PER_INSERT = 250;

/** The batch and every code's hash, together or not at all. Run it in a transaction. */
export async function insertRedemptionBatch(db: Kysely<DB>, batch: RedemptionBatchRow, codeHashes: string[]): Promise<void> {
  await db.insertInto('redemption_batches').values(batch).execute();
  for (let start = 0; start < codeHashes.length; start += CODES_PER_INSERT) {
    const rows = codeHashes
      .slice(start, start + CODES_PER_INSERT)
      .map((code_hash) => ({ code_hash, batch_id: batch.id, redeemed_by: null, redeemed_at: null }));
    await db.insertInto('redemption_codes').values(rows).execute();
  }
}

/** Batches newest first, each with how many of its codes were redeemed. */
export async function listRedemptionBatches(db: Kysely<DB>, { limit }: { limit: number }): Promise<(RedemptionBatchRow & { redeemed: number })[]> {
  const rows = await db
    .selectFrom('redemption_batches as b')
    .select(['b.id', 'b.name', 'b.amount_micros', 'b.count', 'b.expires_at', 'b.created_at'])
    .select((eb) =>
      eb
        .selectFrom('redemption_codes as c')
        .select(eb.fn.countAll<number>().as('n'))
        .whereRef('c.batch_id', '=', 'b.id')
        .where('c.redeemed_at', 'is not', null)
        .as('redeemed'),
    )
    .orderBy('b.created_at', 'desc')
    .orderBy('b.id', 'desc')
    .limit(limit)
    .execute();
  // count(*) is bigint on PostgreSQL, read as a number (open.ts); null never, but typed so.
  return rows.map((row) => ({ ...row, redeemed: Number(row.redeemed ?? 0) }));
}

export interface FoundCode {
  code_hash: string;
  batch_id: string;
  redeemed_by: string | null;
  amount_micros: number;
  expires_at: number | null;
}

export async function findCode(db: Kysely<DB>, codeHash: string): Promise<FoundCode | undefined> {
  return db
    .selectFrom('redemption_codes as c')
    .innerJoin('redemption_batches as b', 'b.id', 'c.batch_id')
    .select(['c.code_hash', 'c.batch_id', 'c.redeemed_by', 'b.amount_micros', 'b.expires_at'])
    .where('c.code_hash', '=', codeHash)
    .executeTakeFirst();
}

/**
 * Redeems the code for the account unless someone already has: one conditional update, so of two
 * transactions racing on one code (PostgreSQL makes the second wait on the first's row lock, then
 * re-checks) exactly one changes the row. True when this one did.
 */
export async function claimCode(db: Kysely<DB>, { codeHash, accountId, now }: { codeHash: string; accountId: string; now: number }): Promise<boolean> {
  const result = await db
    .updateTable('redemption_codes')
    .set({ redeemed_by: accountId, redeemed_at: now })
    .where('code_hash', '=', codeHash)
    .where('redeemed_by', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * Counts one try of the account in the window unless `limit` tries are counted already: the count
 * after it, or undefined when refused. One statement, so concurrent tries on any instance never
 * pass the limit together; the row stays locked (PostgreSQL) until the caller's transaction ends,
 * which makes an account's redemptions one at a time. Windows before this one are deleted.
 */
export async function countTry(
  db: Kysely<DB>,
  { accountId, windowStart, limit }: { accountId: string; windowStart: number; limit: number },
): Promise<number | undefined> {
  await db.deleteFrom('redemption_failures').where('account_id', '=', accountId).where('window_start', '<', windowStart).execute();
  const row = await db
    .insertInto('redemption_failures')
    .values({ account_id: accountId, window_start: windowStart, failures: 1 })
    .onConflict((oc) =>
      oc
        .columns(['account_id', 'window_start'])
        .doUpdateSet({ failures: sql<number>`redemption_failures.failures + 1` })
        .where('redemption_failures.failures', '<', limit),
    )
    .returning('failures')
    .executeTakeFirst();
  return row === undefined ? undefined : Number(row.failures);
}

/** Takes back a try counted by countTry: one that credited the account is no wrong code. */
export async function uncountTry(db: Kysely<DB>, { accountId, windowStart }: { accountId: string; windowStart: number }): Promise<void> {
  await db
    .updateTable('redemption_failures')
    .set({ failures: sql<number>`failures - 1` })
    .where('account_id', '=', accountId)
    .where('window_start', '=', windowStart)
    .execute();
}
