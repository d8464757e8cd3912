// Migration 027: card payments through Stripe Checkout and the webhook events already applied (topups/stripe-*.ts).
import type { MigrationDb } from './migration-db.js';

export type CardPaymentStatus = 'open' | 'paid' | 'refunded' | 'disputed';

/** A Checkout Session the gateway created for an account, and what became of it. */
export interface CardPaymentsTable {
  /** Stripe's Checkout Session id (cs_…). */
  id: string;
  account_id: string;
  /** What the payment credits, as stored when the session was made: the one amount ever credited. */
  amount_micros: number;
  /** The same amount in the currency's minor units, as sent to Stripe (amount_total). */
  amount_minor: number;
  currency: string;
  status: CardPaymentStatus;
  /** The PaymentIntent (pi_…), known once the session is paid: refunds and disputes name it. */
  payment_intent: string | null;
  /** Debited so far for refunds of the payment. */
  refunded_micros: number;
  /** Debited for a lost dispute (0: none), and the dispute's id. */
  disputed_micros: number;
  dispute_id: string | null;
  created_at: number;
  paid_at: number | null;
  updated_at: number;
}

/** A Stripe event id already applied: a replay of it is a no-op. */
export interface StripeEventsTable {
  id: string;
  type: string;
  received_at: number;
}

export async function addCardPayments(db: MigrationDb): Promise<void> {
  await db.schema
    .createTable('card_payments')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('amount_micros', 'bigint', (c) => c.notNull())
    .addColumn('amount_minor', 'bigint', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('payment_intent', 'text')
    .addColumn('refunded_micros', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('disputed_micros', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('dispute_id', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('paid_at', 'bigint')
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  // Refund and dispute events name the PaymentIntent; the account lists its own payments newest first.
  await db.schema.createIndex('card_payments_payment_intent').on('card_payments').column('payment_intent').execute();
  await db.schema.createIndex('card_payments_account_created').on('card_payments').columns(['account_id', 'created_at']).execute();

  await db.schema
    .createTable('stripe_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('received_at', 'bigint', (c) => c.notNull())
    .execute();
}
