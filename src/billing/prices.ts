// Turning counted units into integer micros. No floating point reaches a balance.
import type { ModelConfig, PriceUnit } from '../config/schema.js';

export type Units = Partial<Record<PriceUnit, number>>;

// Token prices are quoted per million tokens; every other unit per unit.
const DIVISOR: Record<PriceUnit, number> = {
  input_token: 1_000_000,
  output_token: 1_000_000,
  call: 1,
  character: 1,
  second: 1,
  image: 1,
};

/**
 * The charge for `units` at `price`, each unit line rounded up to a whole micro. Never throws:
 * a total past what an integer holds exactly saturates (the settle caps it at the hold anyway).
 */
export function priceMicros(units: Units, price: ModelConfig['price']): number {
  let total = 0;
  // for…in, not Object.entries: no array of pairs on every call (units are plain objects)
  for (const key in units) {
    const unit = key as PriceUnit;
    const count = units[unit];
    const perUnit = price[unit] ?? 0;
    if (!count || !perUnit) continue;
    total += Math.ceil((count * perUnit) / DIVISOR[unit]);
  }
  return Number.isFinite(total) ? Math.min(total, Number.MAX_SAFE_INTEGER) : Number.MAX_SAFE_INTEGER;
}

export interface SaneUnits {
  units: Units;
  /** Some figure was not sane (negative, not a number, beyond its bound) and was replaced. */
  clamped: boolean;
}

/**
 * Units as read from an upstream, made sane to price, never thrown on (DESIGN §3): a figure that
 * is not a number or is negative is replaced by `fallback`'s (the gateway's own count), one beyond
 * `bounds` (the request's and the model's limits) by the bound, and fractions round up.
 */
export function saneUnits(units: Units, { bounds, fallback }: { bounds: Units; fallback: Units }): SaneUnits {
  const safe: Units = {};
  let clamped = false;
  for (const key in units) {
    const unit = key as PriceUnit;
    const count: unknown = units[unit];
    const bound = bounds[unit] ?? Number.MAX_SAFE_INTEGER;
    let value: number;
    if (typeof count !== 'number' || Number.isNaN(count) || count < 0) value = Math.min(fallback[unit] ?? 0, bound);
    else if (Math.ceil(count) > bound) value = bound;
    else value = Math.ceil(count);
    if (typeof count !== 'number' || count < 0 || !(Math.ceil(count) <= bound)) clamped = true;
    safe[unit] = value;
  }
  return { units: safe, clamped };
}

/** Task results: no bounds beyond what the settle's cap enforces. */
export const usableUnits = (units: Units, fallback: Units): Units => saneUnits(units, { bounds: {}, fallback }).units;
