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

/** The charge for `units` at `price`, each unit line rounded up to a whole micro. */
export function priceMicros(units: Units, price: ModelConfig['price']): number {
  let total = 0;
  for (const [unit, count] of Object.entries(units) as [PriceUnit, number][]) {
    const perUnit = price[unit] ?? 0;
    if (!count || !perUnit) continue;
    total += Math.ceil((count * perUnit) / DIVISOR[unit]);
  }
  if (!Number.isSafeInteger(total)) throw new RangeError(`charge out of range: ${total}`);
  return total;
}

/**
 * Units as read from an upstream, made safe to price: a count that is not a finite, non-negative
 * number (a broken or hostile upstream) is replaced by the estimate's, and fractions round up.
 */
export function usableUnits(units: Units, estimate: Units): Units {
  const safe: Units = {};
  for (const [unit, count] of Object.entries(units) as [PriceUnit, unknown][]) {
    const value = typeof count === 'number' && Number.isFinite(count) && count >= 0 && count <= Number.MAX_SAFE_INTEGER ? count : estimate[unit] ?? 0;
    safe[unit] = Math.ceil(value);
  }
  return safe;
}
