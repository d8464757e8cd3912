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
  /** Each replaced figure as it was reported, for the usage row's flags. */
  replaced: Partial<Record<PriceUnit, unknown>>;
}

/**
 * Units as read from an upstream, made sane to price, never thrown on (DESIGN §3): a figure that
 * is not a number or is negative is replaced by `fallback`'s (the gateway's own count of what was
 * made, asked for only then), one beyond `bounds` (the request's and the model's limits) by the
 * bound, and fractions round up.
 */
export function saneUnits(units: Units, { bounds, fallback }: { bounds: Units; fallback: Units | (() => Units) }): SaneUnits {
  const safe: Units = {};
  let clamped = false;
  let replaced: SaneUnits['replaced'] | undefined;
  let counted: Units | undefined;
  for (const key in units) {
    const unit = key as PriceUnit;
    const count: unknown = units[unit];
    const bound = bounds[unit] ?? Number.MAX_SAFE_INTEGER;
    let value: number;
    if (typeof count !== 'number' || Number.isNaN(count) || count < 0) {
      counted ??= typeof fallback === 'function' ? fallback() : fallback;
      value = Math.min(counted[unit] ?? 0, bound);
    } else if (Math.ceil(count) > bound) value = bound;
    else value = Math.ceil(count);
    if (typeof count !== 'number' || count < 0 || !(Math.ceil(count) <= bound)) {
      clamped = true;
      replaced ??= {};
      replaced[unit] = count;
    }
    safe[unit] = value;
  }
  return { units: safe, clamped, replaced: replaced ?? NONE_REPLACED };
}

const NONE_REPLACED: SaneUnits['replaced'] = Object.freeze({});

/**
 * A replaced figure as a usage row's flag, `clamped:<unit>=<figure>` (`clamped:output_token=-5`,
 * `clamped:input_token="n/a"`): short, and without the comma that separates the row's flags.
 */
export function clampedFlag(unit: string, figure: unknown): string {
  const shown = typeof figure === 'number' ? String(figure) : (JSON.stringify(figure) ?? String(figure));
  return `clamped:${unit}=${(shown.length > 40 ? `${shown.slice(0, 40)}…` : shown).replaceAll(',', '%2C')}`;
}

/** Task results: no bounds beyond what the settle's cap enforces. */
export const usableUnits = (units: Units, fallback: Units): Units => saneUnits(units, { bounds: {}, fallback }).units;
