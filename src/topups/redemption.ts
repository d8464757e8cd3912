// Redemption codes: the operator makes a batch of codes worth an amount each, shown once and kept
// only as hashes; an account redeems one, which credits it exactly once however many instances
// race on the code. Tries that credit nothing are counted per account in the store, so a guesser
// is stopped after a few on every instance at once.
import { randomBytes } from 'node:crypto';
import { creditIn } from '../billing/accounts.js';
import { MAX_BALANCE_MICROS, requireMicros } from '../billing/movements.js';
import { hashSecret, sameHash } from '../console/secrets.js';
import { conflict, forbidden, invalidRequest, notFound, rateLimited } from '../errors.js';
import type { AccountRow } from '../store/accounts.js';
import { newId } from '../store/ids.js';
import type { Store } from '../store/open.js';
import { claimCode, countTry, findCode, insertRedemptionBatch, type RedemptionBatchRow, uncountTry } from '../store/redemption-codes.js';

export const CODE_PREFIX = 'trc-';
/** Crockford's base32: no I, L, O or U, so a code read aloud or retyped is not misread. */
const CODE_DIGITS = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
/** 26 digits of 5 bits: 130 random bits. */
const CODE_LENGTH = 26;
export const MAX_CODES_PER_BATCH = 1000;

/** A new code: `trc-` and 26 base32 digits from the system's generator. */
export function newRedemptionCode(): string {
  const bytes = randomBytes(CODE_LENGTH);
  // 256 is a multiple of 32, so every digit is as likely.
  let digits = '';
  for (const byte of bytes) digits += CODE_DIGITS[byte % 32];
  return CODE_PREFIX + digits;
}

/** What a holder typed, as it was issued: spaces around it dropped, the digits in upper case. */
export function normalizeCode(typed: string): string {
  const code = typed.trim();
  return code.toLowerCase().startsWith(CODE_PREFIX) ? CODE_PREFIX + code.slice(CODE_PREFIX.length).toUpperCase() : code;
}

export interface NewBatch {
  amountMicros: number;
  count: number;
  expiresAt: number | null;
  name: string | null;
}

/** The batch row and its codes in clear, which exist nowhere else once this returns. */
export async function createRedemptionBatch(
  store: Store,
  { amountMicros, count, expiresAt, name }: NewBatch,
  now = Date.now(),
): Promise<{ batch: RedemptionBatchRow; codes: string[] }> {
  requireMicros('amount_micros', amountMicros, { min: 1 });
  if (!Number.isInteger(count) || count < 1 || count > MAX_CODES_PER_BATCH) {
    throw invalidRequest(`count: expected an integer from 1 to ${MAX_CODES_PER_BATCH}, got ${count}`);
  }
  if (expiresAt !== null && expiresAt <= now) throw invalidRequest(`expires_at: must be in the future, got ${new Date(expiresAt).toISOString()}`);
  const batch: RedemptionBatchRow = { id: newId('rb'), name, amount_micros: amountMicros, count, expires_at: expiresAt, created_at: now };
  const codes = Array.from({ length: count }, newRedemptionCode);
  await store.db.transaction().execute((trx) => insertRedemptionBatch(trx, batch, codes.map(hashSecret)));
  return { batch, codes };
}

export interface WrongCodeLimit {
  perWindow: number;
  windowMs: number;
}

export interface Redemption {
  amountMicros: number;
  batchId: string;
  account: AccountRow;
}

/** The ledger note of a redemption: the batch, never the code. */
export const redemptionNote = (batchId: string) => `redemption code batch ${batchId}`;

type Outcome = Redemption | { refused: 'limited' | 'unknown' | 'redeemed' | 'expired' };

/**
 * Credits the account with the code's amount, once: the try is counted, the code claimed, the
 * account credited and the ledger row written in one transaction, and the count taken back when
 * it credited. A refusal commits its count (it is a wrong try) and throws after: 429 past the
 * limit (the code not even looked up), 404 for an unknown code, 409 for a redeemed or expired one.
 */
export async function redeemCode(
  store: Store,
  { account, code, limit, now = Date.now() }: { account: Pick<AccountRow, 'id' | 'livemode'>; code: string; limit: WrongCodeLimit; now?: number },
): Promise<Redemption> {
  // A code credits live money; the test balance is the operator's to fill (docs/api.md "Test mode").
  if (account.livemode === 0) throw forbidden('code: a test key cannot redeem codes, which credit the live balance; redeem with a live key or in the console');
  const windowStart = Math.floor(now / limit.windowMs) * limit.windowMs;
  const codeHash = hashSecret(normalizeCode(code));
  const tally = { accountId: account.id, windowStart };
  const outcome = await store.db.transaction().execute(async (trx): Promise<Outcome> => {
    if ((await countTry(trx, { ...tally, limit: limit.perWindow })) === undefined) return { refused: 'limited' };
    const found = await findCode(trx, codeHash);
    if (!found || !sameHash(found.code_hash, codeHash)) return { refused: 'unknown' };
    if (found.redeemed_by !== null) return { refused: 'redeemed' };
    if (found.expires_at !== null && found.expires_at <= now) return { refused: 'expired' };
    if (!(await claimCode(trx, { codeHash, accountId: account.id, now }))) return { refused: 'redeemed' };
    const credited = await creditIn(trx, { accountId: account.id, amountMicros: found.amount_micros, note: redemptionNote(found.batch_id), now });
    // Thrown, so the claim and the count roll back with it: the code stays redeemable.
    if (!credited) throw invalidRequest(`code: the balance would pass ${MAX_BALANCE_MICROS} micros, the most the store keeps exactly`);
    await uncountTry(trx, tally);
    return { amountMicros: found.amount_micros, batchId: found.batch_id, account: credited };
  });
  if (!('refused' in outcome)) return outcome;
  switch (outcome.refused) {
    case 'limited':
      throw rateLimited({
        retryAfterMs: windowStart + limit.windowMs - now,
        message: `code: too many codes tried that credited nothing (${limit.perWindow} per window); try again after Retry-After`,
      });
    case 'unknown':
      throw notFound('code: no such redemption code');
    case 'redeemed':
      throw conflict('code: this code has already been redeemed');
    case 'expired':
      throw conflict('code: this code has expired');
  }
}
