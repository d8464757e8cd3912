// Limits an account holder may put on one of its keys: the models it may call, when it stops
// working, and how much it may spend per UTC day and per UTC month. The rate limit (rpm) is the
// key's own column and is taken by the limiter like every key's.
//
// A capped key's spend in a period is a counter (`key_spend`) that its holds reserve in, inside the
// hold's own transaction, and that the hold's settle or release corrects to the real charge. So
// concurrent calls can never together pass the cap: each reservation is a conditional increment
// of one row. A key without caps never touches the counters (its calls stay on the hot ledger).
import { type Kysely, sql } from 'kysely';
import { billing, forbidden } from '../errors.js';
import type { DB } from '../store/schema.js';
import { fromUsageTable } from '../store/usage.js';

export interface KeyLimits {
  /** Model ids or aliases the key may call; null: any. */
  allowedModels: string[] | null;
  dailyCapMicros: number | null;
  monthlyCapMicros: number | null;
  /** When the key stops working (ms); null: never. */
  expiresAt: number | null;
}

/** The limit columns of an api_keys row. */
export interface KeyLimitColumns {
  allowed_models: string | null;
  daily_cap_micros: number | null;
  monthly_cap_micros: number | null;
  expires_at: number | null;
}

/** The key's limits, or undefined when it has none (the usual case: nothing to check per call). */
export function limitsOf(row: KeyLimitColumns): KeyLimits | undefined {
  if (row.allowed_models === null && row.daily_cap_micros === null && row.monthly_cap_micros === null && row.expires_at === null) return undefined;
  return {
    allowedModels: row.allowed_models === null ? null : (JSON.parse(row.allowed_models) as string[]),
    dailyCapMicros: row.daily_cap_micros,
    monthlyCapMicros: row.monthly_cap_micros,
    expiresAt: row.expires_at,
  };
}

/**
 * Whether a key (or a console session signed in with one) carries any limit, its own rpm included.
 * Such a caller may not issue or change keys, revoke a key without limits, nor read or rotate the
 * webhook secret: each would let it lift its limits, or act beyond them.
 */
export const callerHasLimits = (caller: { limits?: KeyLimits; rpm: number | null }): boolean => caller.limits !== undefined || caller.rpm !== null;

/** The same of a stored key's columns. */
export const keyHasLimits = (row: KeyLimitColumns & { rpm: number | null }): boolean => row.rpm !== null || limitsOf(row) !== undefined;

export const hasSpendCap = (limits: KeyLimits | undefined): limits is KeyLimits =>
  limits !== undefined && (limits.dailyCapMicros !== null || limits.monthlyCapMicros !== null);

export const isExpired = (limits: KeyLimits | undefined, now: number): boolean => limits?.expiresAt != null && limits.expiresAt <= now;

/** 403 unless the key may call the model, named by the caller (`requested`) or by its id. */
export function requireModelAllowed(limits: KeyLimits | undefined, requested: string | undefined, modelId: string): void {
  const allowed = limits?.allowedModels;
  if (!allowed || allowed.includes(modelId) || (requested !== undefined && allowed.includes(requested))) return;
  throw forbidden(`this API key may not use model ${requested ?? modelId}; it may use: ${allowed.join(', ')}`);
}

interface CapPeriod {
  /** key_spend.period: 'd2026-11-22' or 'm2026-11' (UTC). */
  period: string;
  capMicros: number;
  name: 'daily' | 'monthly';
  startsAt: number;
}

/** The key_spend periods `now` falls in: its UTC day and its UTC month, with when each began. */
export function spendPeriodsAt(now: number) {
  const at = new Date(now);
  const day = at.toISOString().slice(0, 10);
  return {
    day: { period: `d${day}`, startsAt: Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()) },
    month: { period: `m${day.slice(0, 7)}`, startsAt: Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1) },
  };
}

function capPeriods(limits: KeyLimits, now: number): CapPeriod[] {
  const { day, month } = spendPeriodsAt(now);
  const periods: CapPeriod[] = [];
  if (limits.dailyCapMicros !== null) periods.push({ ...day, capMicros: limits.dailyCapMicros, name: 'daily' });
  if (limits.monthlyCapMicros !== null) periods.push({ ...month, capMicros: limits.monthlyCapMicros, name: 'monthly' });
  return periods;
}

const units = (micros: number) => (micros / 1_000_000).toFixed(6);

/**
 * Reserves `amountMicros` of the key's spend in each capped period, inside the hold's transaction
 * (after the account's row, as every step locks them: no deadlock). Returns the periods to write
 * on the hold; throws 402 naming the cap when one would be passed, which rolls the hold back.
 */
export async function reserveKeySpend(
  trx: Kysely<DB>,
  { keyId, accountId, limits, amountMicros, now }: { keyId: string; accountId: string; limits: KeyLimits; amountMicros: number; now: number },
): Promise<string> {
  const periods = capPeriods(limits, now);
  for (const p of periods) {
    const existing = await trx.selectFrom('key_spend').select('spent_micros').where('key_id', '=', keyId).where('period', '=', p.period).executeTakeFirst();
    // A period's counter starts from what the key already spent in it (it may have been capped
    // only now); later steps keep it up to date. A concurrent first reservation that inserts first
    // wins, and this one then increments that row instead.
    const seed = existing ? 0 : await spentBefore(trx, { keyId, accountId, period: p.period, since: p.startsAt });
    const { rows } = await sql<{ spent_micros: number }>`
      insert into key_spend (key_id, period, spent_micros)
      select cast(${keyId} as text), cast(${p.period} as text), cast(${seed + amountMicros} as bigint)
      where cast(${seed + amountMicros} as bigint) <= cast(${p.capMicros} as bigint)
      on conflict (key_id, period) do update set spent_micros = key_spend.spent_micros + cast(${amountMicros} as bigint)
      where key_spend.spent_micros + cast(${amountMicros} as bigint) <= cast(${p.capMicros} as bigint)
      returning spent_micros`.execute(trx);
    if (rows.length === 0) {
      const spent = existing?.spent_micros ?? seed;
      throw billing(
        `this API key's ${p.name} spend cap of ${units(p.capMicros)} is reached: ${units(Number(spent))} spent or held this ${p.name === 'daily' ? 'day' : 'month'} (UTC), and this call needs ${units(amountMicros)}`,
      );
    }
  }
  return periods.map((p) => p.period).join(',');
}

/** Moves the counters a hold reserved in by `deltaMicros` (a settle: charge − held; a release: −held). */
export async function moveKeySpend(
  trx: Kysely<DB>,
  { keyId, capPeriods, deltaMicros }: { keyId: string; capPeriods: string; deltaMicros: number },
): Promise<void> {
  if (deltaMicros === 0) return;
  await trx
    .updateTable('key_spend')
    .set({ spent_micros: sql`spent_micros + cast(${deltaMicros} as bigint)` })
    .where('key_id', '=', keyId)
    .where('period', 'in', capPeriods.split(','))
    .execute();
}

/** What the key's settled calls charged since the period began, plus its capped holds still open there. */
async function spentBefore(
  trx: Kysely<DB>,
  { keyId, accountId, period, since }: { keyId: string; accountId: string; period: string; since: number },
): Promise<number> {
  // Both tables of usage rows (store/usage.ts); each sum keeps its table's own plan.
  const usedIn = (table: 'usage' | 'usage_recent') =>
    fromUsageTable(trx, table)
      .select(sql<string | number | null>`sum(amount_micros)`.as('total'))
      .where('account_id', '=', accountId)
      .where('key_id', '=', keyId)
      .where('created_at', '>=', since)
      .executeTakeFirst();
  const used = [await usedIn('usage'), await usedIn('usage_recent')];
  const open = await trx
    .selectFrom('holds')
    .select(sql<string | number | null>`sum(amount_micros)`.as('total'))
    .where('state', '=', 'open')
    .where('created_at', '>=', since)
    .where('key_id', '=', keyId)
    .where('cap_periods', 'like', `%${period}%`)
    .executeTakeFirst();
  return used.reduce((sum, row) => sum + Number(row?.total ?? 0), 0) + Number(open?.total ?? 0);
}
