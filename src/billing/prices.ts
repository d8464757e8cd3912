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
