// An account's own money steps (DESIGN §3): its creation with an opening credit, later credits,
// and the check that its balance and held funds equal the sum of its ledger rows.
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { invalidRequest, notFound } from '../errors.js';
import { type AccountRow, creditWithinLimit, findAccount, insertAccount } from '../store/accounts.js';
import { newId } from '../store/ids.js';
import { insertLedgerRow, sumLedger } from '../store/ledger-rows.js';
import { clearRecovered } from '../store/low-balance.js';
import type { Store } from '../store/open.js';
import type { DB } from '../store/schema.js';
import { ledgerRow, MAX_BALANCE_MICROS, requireMicros } from './movements.js';

export async function createAccount(
  store: Store,
  { name, creditMicros = 0, overdraftMicros = 0, now = Date.now() }: { name: string; creditMicros?: number; overdraftMicros?: number; now?: number },
): Promise<AccountRow> {
  requireMicros('creditMicros', creditMicros, { min: 0 });
  requireMicros('overdraftMicros', overdraftMicros, { min: 0 });
  const id = newId('acct');
  return store.db.transaction().execute(async (trx) => {
    const account = await insertAccount(trx, {
      id,
      name,
      balance_micros: creditMicros,
      held_micros: 0,
      webhook_secret: newWebhookSecret(),
      created_at: now,
      overdraft_micros: overdraftMicros,
    });
    if (creditMicros > 0) {
      await insertLedgerRow(trx, ledgerRow({ accountId: id, kind: 'credit', balanceDelta: creditMicros, now }));
    }
    return account;
  });
}

export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}

export interface Credit {
  accountId: string;
  amountMicros: number;
  /** What the ledger row says the money is (a redemption batch, a card payment); none for the operator's own credit. */
  note?: string;
  now?: number;
}

/**
 * A credit inside the caller's transaction, as every top-up makes it: the balance raised, its ledger
 * row, and a low-balance crossing it ends cleared now rather than at the next sweep. Undefined, with
 * nothing written, when there is no such account or the balance would pass what the store keeps exactly.
 */
export async function creditIn(trx: Kysely<DB>, { accountId, amountMicros, note, now = Date.now() }: Credit): Promise<AccountRow | undefined> {
  const account = await creditWithinLimit(trx, { accountId, amountMicros, limitMicros: MAX_BALANCE_MICROS });
  if (!account) return undefined;
  await insertLedgerRow(trx, ledgerRow({ accountId, kind: 'credit', balanceDelta: amountMicros, note, now }));
  await clearRecovered(trx, { accountId });
  return account;
}

export async function creditAccount(store: Store, credit: Credit): Promise<AccountRow> {
  requireMicros('amountMicros', credit.amountMicros, { min: 1 });
  return store.db.transaction().execute(async (trx) => {
    const account = await creditIn(trx, credit);
    if (account) return account;
    if (!(await findAccount(trx, credit.accountId))) throw notFound(`account ${credit.accountId} not found`);
    throw invalidRequest(`amount_micros: the balance would pass ${MAX_BALANCE_MICROS} micros, the most the store keeps exactly`);
  });
}

export interface BalanceCheck {
  balanceMicros: number;
  heldMicros: number;
  ledgerBalanceMicros: number;
  ledgerHeldMicros: number;
  consistent: boolean;
}

// Both reads in one transaction; on PostgreSQL, repeatable read gives both one snapshot, so a
// hold committed between them cannot show up as a false inconsistency. (SQLite has one writer.)
export async function checkAccountBalance(store: Store, accountId: string): Promise<BalanceCheck> {
  const tx = store.dialect === 'postgres' ? store.db.transaction().setIsolationLevel('repeatable read') : store.db.transaction();
  return tx.execute(async (trx) => {
    const account = await findAccount(trx, accountId);
    if (!account) throw notFound(`account ${accountId} not found`);
    const sums = await sumLedger({ db: trx, dialect: store.dialect }, accountId);
    return {
      balanceMicros: account.balance_micros,
      heldMicros: account.held_micros,
      ledgerBalanceMicros: sums.balanceDeltaMicros,
      ledgerHeldMicros: sums.heldDeltaMicros,
      consistent: account.balance_micros === sums.balanceDeltaMicros && account.held_micros === sums.heldDeltaMicros,
    };
  });
}
