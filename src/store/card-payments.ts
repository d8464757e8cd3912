// Queries on `card_payments` and `stripe_events` (topups/stripe-events.ts applies the events). Every
// change of a payment is a conditional update: its where clause is the exactly-once gate, so two
// instances applying events of one payment at once change it once.
import type { Insertable, Kysely, Selectable } from 'kysely';
import type { CardPaymentsTable } from './payment-tables.js';
import type { DB } from './schema.js';

export type CardPaymentRow = Selectable<CardPaymentsTable>;

export async function insertCardPayment(db: Kysely<DB>, row: Insertable<CardPaymentsTable>): Promise<void> {
  await db.insertInto('card_payments').values(row).execute();
}

export async function findCardPayment(db: Kysely<DB>, id: string): Promise<CardPaymentRow | undefined> {
  return db.selectFrom('card_payments').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The payment a refund or a dispute names, by its PaymentIntent. */
export async function findCardPaymentByIntent(db: Kysely<DB>, paymentIntent: string): Promise<CardPaymentRow | undefined> {
  return db.selectFrom('card_payments').selectAll().where('payment_intent', '=', paymentIntent).executeTakeFirst();
}

/**
 * An event id seen for the first time: true, and it is recorded; false when it was recorded before
 * (a replay). On PostgreSQL a concurrent insert of the same id waits for the first transaction and
 * then does nothing, so the second delivery never applies the event.
 */
export async function recordStripeEvent(db: Kysely<DB>, { id, type, now }: { id: string; type: string; now: number }): Promise<boolean> {
  const inserted = await db
    .insertInto('stripe_events')
    .values({ id, type, received_at: now })
    .onConflict((oc) => oc.column('id').doNothing())
    .returning('id')
    .executeTakeFirst();
  return inserted !== undefined;
}

/** open → paid, once: the row when this call made the change, undefined when it was paid (or gone) before. */
export async function markCardPaymentPaid(
  db: Kysely<DB>,
  { id, paymentIntent, now }: { id: string; paymentIntent: string | null; now: number },
): Promise<CardPaymentRow | undefined> {
  return db
    .updateTable('card_payments')
    .set({ status: 'paid', payment_intent: paymentIntent, paid_at: now, updated_at: now })
    .where('id', '=', id)
    .where('status', '=', 'open')
    .returningAll()
    .executeTakeFirst();
}

/** Raises refunded_micros from `from` to `to`: false when another event moved it first (read again). */
export async function raiseRefunded(
  db: Kysely<DB>,
  { id, from, to, fullyRefunded, now }: { id: string; from: number; to: number; fullyRefunded: boolean; now: number },
) {
  const result = await db
    .updateTable('card_payments')
    .set({ refunded_micros: to, updated_at: now, ...(fullyRefunded && { status: 'refunded' as const }) })
    .where('id', '=', id)
    .where('refunded_micros', '=', from)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Records the payment's lost dispute, once: false when one was recorded before. */
export async function markDisputeLost(db: Kysely<DB>, { id, disputeId, micros, now }: { id: string; disputeId: string; micros: number; now: number }) {
  const result = await db
    .updateTable('card_payments')
    .set({ status: 'disputed', dispute_id: disputeId, disputed_micros: micros, updated_at: now })
    .where('id', '=', id)
    .where('dispute_id', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** The account's payments, newest first. */
export async function listAccountCardPayments(db: Kysely<DB>, { accountId, limit }: { accountId: string; limit: number }): Promise<CardPaymentRow[]> {
  return db.selectFrom('card_payments').selectAll().where('account_id', '=', accountId).orderBy('created_at', 'desc').limit(limit).execute();
}
