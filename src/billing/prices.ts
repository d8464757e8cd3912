// Turning counted units into integer micros. No floating point reaches a balance.
import { PRICE_UNITS, type Price, type PriceTier, type PriceUnit, TOKEN_UNITS } from '../config/schema.js';
import { promptOf } from './usage-units.js';

export type Units = Partial<Record<PriceUnit, number>>;
type UnitPrices = Partial<Record<PriceUnit, number>>;

const TOKEN_UNIT_SET: ReadonlySet<string> = new Set(TOKEN_UNITS);

// Token prices are quoted per million tokens; every other unit per unit.
const divisorOf = (unit: PriceUnit) => (TOKEN_UNIT_SET.has(unit) ? 1_000_000 : 1);

/**
 * The price a unit is billed at when the model does not price it apart: a cache read, a cache write,
 * audio and image input at the input price (a 1-hour write at the 5-minute one first), reasoning and
 * audio output at the output price.
 */
export const PRICE_FALLBACK: Partial<Record<PriceUnit, PriceUnit>> = {
  cached_input_token: 'input_token',
  cache_write_token: 'input_token',
  cache_write_1h_token: 'cache_write_token',
  audio_input_token: 'input_token',
  image_input_token: 'input_token',
  reasoning_token: 'output_token',
  audio_output_token: 'output_token',
};

/** What one unit costs at `prices`, following the fallbacks; 0 when nothing prices it. */
export function unitPrice(prices: UnitPrices, unit: PriceUnit): number {
  let at: PriceUnit | undefined = unit;
  while (at) {
    const perUnit = prices[at];
    if (perUnit !== undefined) return perUnit;
    at = PRICE_FALLBACK[at];
  }
  return 0;
}

const tierPrices = new WeakMap<object, UnitPrices>();

/**
 * The prices in force for a prompt of `promptTokens`: past the highest long-context tier it passes,
 * that tier's prices over the model's own (a price the tier does not list stays as it was).
 */
export function pricesAt(price: Price, promptTokens: number): UnitPrices {
  let tier: PriceTier | undefined;
  for (const candidate of price.tiers ?? []) if (promptTokens > candidate.above_input_tokens) tier = candidate;
  if (tier === undefined) return price;
  let merged = tierPrices.get(tier);
  if (!merged) tierPrices.set(tier, (merged = { ...price, ...tier }));
  return merged;
}

/**
 * The charge for `units` at `price`, each unit line rounded up to a whole micro. Never throws:
 * a total past what an integer holds exactly saturates (the settle caps it at the hold anyway).
 */
export function priceMicros(units: Units, price: Price): number {
  const prices = price.tiers ? pricesAt(price, promptOf(units)) : price;
  let total = 0;
  // for…in, not Object.entries: no array of pairs on every call (units are plain objects)
  for (const key in units) {
    const unit = key as PriceUnit;
    const count = units[unit];
    if (!count) continue;
    const perUnit = unitPrice(prices, unit);
    if (!perUnit) continue;
    total += Math.ceil((count * perUnit) / divisorOf(unit));
  }
  return Number.isFinite(total) ? Math.min(total, Number.MAX_SAFE_INTEGER) : Number.MAX_SAFE_INTEGER;
}

/** A settled call's units with the model's fee per request, `call: 1`, where the model has one and the units carry no call count. */
export function withRequestFee(units: Units, price: Price): Units {
  return price.call && units.call === undefined ? { ...units, call: 1 } : units;
}

/** Every unit price of `price` (its tiers' too) passed through `each`: a discount, a plan's multiplier. */
export function mapPrice(price: Price, each: (perUnit: number, unit: PriceUnit) => number): Price {
  const mapUnits = <T extends UnitPrices>(prices: T): T => {
    const out = { ...prices };
    for (const unit of PRICE_UNITS) {
      const perUnit = prices[unit];
      if (perUnit !== undefined) out[unit] = each(perUnit, unit) as T[PriceUnit];
    }
    return out;
  };
  const mapped = mapUnits(price);
  if (price.tiers) mapped.tiers = price.tiers.map(mapUnits);
  return mapped;
}

const INPUT_SIDE: readonly PriceUnit[] = [
  'input_token',
  'cached_input_token',
  'cache_write_token',
  'cache_write_1h_token',
  'audio_input_token',
  'image_input_token',
];
const OUTPUT_SIDE: readonly PriceUnit[] = ['output_token', 'reasoning_token', 'audio_output_token'];
const heldPrices = new WeakMap<Price, Price>();

/**
 * The prices a hold is made at: the estimate counts the whole prompt as `input_token` and the whole
 * output as `output_token`, so each is held at the dearest price any part of it may come to (a cache
 * write, audio), and the settle, on the upstream's split, never passes the hold.
 */
function heldPrice(price: Price): Price {
  let held = heldPrices.get(price);
  if (held) return held;
  const dearest = (prices: UnitPrices): UnitPrices => {
    const out = { ...prices };
    const input = Math.max(...INPUT_SIDE.map((unit) => unitPrice(prices, unit)));
    const output = Math.max(...OUTPUT_SIDE.map((unit) => unitPrice(prices, unit)));
    if (input > 0) out.input_token = input;
    if (output > 0) out.output_token = output;
    return out;
  };
  held = { ...dearest(price), ...(price.tiers && { tiers: price.tiers.map((tier) => ({ ...tier, ...dearest(tier) })) }) } as Price;
  heldPrices.set(price, held);
  return held;
}

/** What to hold for an estimate (the whole prompt as input, the output cap as output): the dearest case, the request fee included. */
export const holdMicros = (estimate: Units, price: Price): number => priceMicros(withRequestFee(estimate, price), heldPrice(price));

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
