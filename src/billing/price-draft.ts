// Turning a price data package's entries (US dollars, per million tokens, per thousand calls, per
// hour…) into tollroute's integer micros, with the operator's markup. Exact: every figure is read as
// a decimal and carried as a fraction of big integers, then rounded up once to a whole micro.
import type { PriceUnit } from '../config/schema.js';

/** A price as the package gives it: a flat figure, or a base with long-context tiers. */
export type PackagePrice = number | { base: number; tiers: { start: number; price: number }[] };
export type PackagePrices = Record<string, PackagePrice | undefined>;

/** A dated or timed choice of prices, as the package lists them for a model. */
export interface PackagePriceChoice {
  constraint?: { type: 'start_date'; start_date: string } | { type: 'time_of_date'; start_time: string; end_time: string };
  prices: PackagePrices;
}

export type DraftedPrice = Partial<Record<PriceUnit, number>> & { tiers?: DraftedTier[] };
export type DraftedTier = { above_input_tokens: number } & Partial<Record<PriceUnit, number>>;

/**
 * The package's price keys that tollroute has a unit for, and how many of tollroute's quantity the
 * package's quantity holds: `_mtok` and token units are both per million tokens, `_kcount` is per
 * thousand calls or searches, `_hours` per 3 600 seconds. The first key to name a unit wins.
 */
export const PACKAGE_UNITS: readonly { key: string; unit: PriceUnit; per: bigint }[] = [
  { key: 'input_mtok', unit: 'input_token', per: 1n },
  { key: 'cache_read_mtok', unit: 'cached_input_token', per: 1n },
  { key: 'cache_write_mtok', unit: 'cache_write_token', per: 1n },
  { key: 'cache_write_1h_mtok', unit: 'cache_write_1h_token', per: 1n },
  { key: 'input_audio_mtok', unit: 'audio_input_token', per: 1n },
  { key: 'input_image_mtok', unit: 'image_input_token', per: 1n },
  { key: 'output_mtok', unit: 'output_token', per: 1n },
  { key: 'output_reasoning_mtok', unit: 'reasoning_token', per: 1n },
  { key: 'output_audio_mtok', unit: 'audio_output_token', per: 1n },
  { key: 'requests_kcount', unit: 'call', per: 1_000n },
  { key: 'web_searches_kcount', unit: 'web_search', per: 1_000n },
  { key: 'input_audio_hours', unit: 'second', per: 3_600n },
  { key: 'audio_hours', unit: 'second', per: 3_600n },
];

/** A non-negative decimal as a fraction: "0.075" is 75/1000; "1e-7" is 1/10000000. */
export function decimalFraction(value: number | string): { numerator: bigint; denominator: bigint } {
  const text = String(value).trim().toLowerCase();
  const match = /^(\d+)(?:\.(\d+))?(?:e([+-]?\d+))?$/.exec(text);
  if (!match) throw new Error(`expected a non-negative decimal number, got "${text}"`);
  const [, whole, fraction = '', exponentText = '0'] = match;
  const exponent = Number(exponentText) - fraction.length;
  const digits = BigInt(`${whole}${fraction}`);
  return exponent >= 0 ? { numerator: digits * 10n ** BigInt(exponent), denominator: 1n } : { numerator: digits, denominator: 10n ** BigInt(-exponent) };
}

/** A markup in percent ("20", "-15", "12.5"), kept as the fraction (100 + markup) / 100. */
export interface Markup {
  text: string;
  numerator: bigint;
  denominator: bigint;
}

export function parseMarkup(text: string): Markup {
  const negative = text.trim().startsWith('-');
  const magnitude = text.trim().replace(/^[-+]/, '');
  if (!/^\d+(\.\d+)?$/.test(magnitude)) throw new Error(`expected a markup in percent such as 20 or -10, got "${text}"`);
  const { numerator, denominator } = decimalFraction(magnitude);
  const hundred = 100n * denominator;
  const factor = negative ? hundred - numerator : hundred + numerator;
  // At -100% every price would be zero: a free gateway is not a markup.
  if (factor <= 0n) throw new Error(`a markup must be above -100 percent, got "${text}"`);
  return { text: `${negative ? '-' : ''}${magnitude}`, numerator: factor, denominator: hundred };
}

export interface DraftOptions {
  markup: Markup;
  /** Micros of the balance per US dollar: 1 000 000 when one balance unit is one dollar. */
  microsPerUsd: bigint;
}

/** One package figure in tollroute micros: ceil(usd × micros_per_usd × (100 + markup) / 100 / per). */
export function usdToMicros(usd: number | string, per: bigint, { markup, microsPerUsd }: DraftOptions): number {
  const price = decimalFraction(usd);
  const numerator = price.numerator * microsPerUsd * markup.numerator;
  const denominator = price.denominator * markup.denominator * per;
  const micros = (numerator + denominator - 1n) / denominator;
  if (micros > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error(`a price of ${usd} USD is beyond what a whole number of micros holds`);
  return Number(micros);
}

/**
 * The prices in force at `at`: the latest dated choice that has started, else the first. A fixed
 * price cannot follow prices by time of day (peak and off-peak), so each unit takes the highest of
 * them, and the gateway never charges less than the provider does at any hour.
 */
export function pricesInForce(prices: PackagePriceChoice[] | PackagePrices, at: Date): { prices: PackagePrices; highestOfTimeOfDay: boolean } {
  if (!Array.isArray(prices)) return { prices, highestOfTimeOfDay: false };
  const timed = prices.filter((choice) => choice.constraint?.type === 'time_of_date');
  const dated = prices.filter((choice) => choice.constraint?.type !== 'time_of_date');
  const started = [...dated].reverse().find((choice) => choice.constraint?.type !== 'start_date' || at >= new Date(choice.constraint.start_date));
  const inForce = { ...(started ?? dated[0] ?? prices[0])!.prices };
  for (const choice of timed) {
    for (const [key, price] of Object.entries(choice.prices)) {
      const current = inForce[key];
      if (price !== undefined && (current === undefined || figureAt(price, -1) > figureAt(current, -1))) inForce[key] = price;
    }
  }
  return { prices: inForce, highestOfTimeOfDay: timed.length > 0 };
}

/** The figure a package price gives past `threshold` input tokens (the base when none is given). */
function figureAt(price: PackagePrice, threshold: number): number {
  if (typeof price === 'number') return price;
  let figure = price.base;
  for (const tier of [...price.tiers].sort((a, b) => a.start - b.start)) if (tier.start <= threshold) figure = tier.price;
  return figure;
}

export interface DraftedModelPrice {
  price: DraftedPrice;
  /** The package's price keys with no tollroute unit (or a unit another key already gave). */
  notCarried: string[];
}

/**
 * A model's package prices as a tollroute price. Long-context prices become `tiers`: one per
 * threshold any unit changes at (the package's threshold is on every input token together, as
 * tollroute's is), each listing every unit's price past it, so a tier reads whole on its own.
 */
export function draftPrice(prices: PackagePrices, options: DraftOptions): DraftedModelPrice {
  const carried: { unit: PriceUnit; per: bigint; price: PackagePrice }[] = [];
  const notCarried: string[] = [];
  for (const [key, price] of Object.entries(prices)) {
    if (price === undefined) continue;
    const known = PACKAGE_UNITS.find((entry) => entry.key === key);
    const taken = known && carried.find((entry) => entry.unit === known.unit);
    if (!known || (taken && JSON.stringify(taken.price) !== JSON.stringify(price))) notCarried.push(key);
    else if (!taken) carried.push({ unit: known.unit, per: known.per, price });
  }
  carried.sort((a, b) => PACKAGE_UNITS.findIndex((e) => e.unit === a.unit) - PACKAGE_UNITS.findIndex((e) => e.unit === b.unit));
  const at = (threshold: number) => {
    const units: Partial<Record<PriceUnit, number>> = {};
    for (const entry of carried) units[entry.unit] = usdToMicros(figureAt(entry.price, threshold), entry.per, options);
    return units;
  };
  const thresholds = [...new Set(carried.flatMap((entry) => (typeof entry.price === 'number' ? [] : entry.price.tiers.map((tier) => tier.start))))]
    .sort((a, b) => a - b)
    // tollroute's thresholds are positive: "past 0 tokens" and "past 1 token" differ by one token.
    .map((start) => Math.max(start, 1));
  // -1: below every package tier's start, so the base figures.
  const price: DraftedPrice = at(-1);
  if (thresholds.length > 0) price.tiers = [...new Set(thresholds)].map((threshold) => ({ above_input_tokens: threshold, ...at(threshold) }));
  return { price, notCarried: notCarried.sort() };
}
