// What the redemption tests share: a batch made through the admin API, and an account's ledger.
import assert from 'node:assert/strict';
import type { TestGateway } from '../helpers/gateway.js';

export interface MadeBatch {
  id: string;
  amount_micros: number;
  codes: string[];
}

/** A batch of `count` codes worth `amountMicros` each, made through the admin API. */
export async function makeBatch(gw: TestGateway, body: { amount_micros: number; count: number; expires_at?: string; name?: string }): Promise<MadeBatch> {
  const made = await gw.admin('POST', '/admin/redemption-batches', body);
  assert.equal(made.status, 201, JSON.stringify(made.body));
  return made.body;
}

/** The account's ledger rows, newest first, as the admin API answers them. */
export async function ledgerOf(gw: TestGateway, accountId: string): Promise<{ kind: string; amount_micros: number; note: string | null }[]> {
  const ledger = await gw.admin('GET', `/admin/accounts/${accountId}/ledger`);
  assert.equal(ledger.status, 200);
  return ledger.body.data;
}

/** Waits until the next fixed window of `windowMs` has just begun, so a test's tries all fall in one. */
export async function startOfNextWindow(windowMs: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, windowMs - (Date.now() % windowMs) + 20));
}
