// A model's prices as GET /v1/models publishes them, in OpenRouter's `pricing` shape: a decimal
// string per unit in the balance's own unit (1 000 000 micros is 1), per token for token units.
import { type Price, type PriceUnit, TOKEN_UNITS } from '../config/schema.js';

/** OpenRouter's name of each dimension (ours beside theirs where they have none). */
export const PRICING_KEYS: Record<PriceUnit, string> = {
  input_token: 'prompt',
  output_token: 'completion',
  cached_input_token: 'input_cache_read',
  cache_write_token: 'input_cache_write',
  cache_write_1h_token: 'input_cache_write_1h',
  reasoning_token: 'internal_reasoning',
  audio_input_token: 'input_audio',
  audio_output_token: 'output_audio',
  image_input_token: 'input_image',
  call: 'request',
  web_search: 'web_search',
  image: 'image',
  character: 'character',
  second: 'second',
};

// A token price is micros per million tokens: per token in balance units, 12 places.
const TOKEN_PLACES = 12;
const UNIT_PLACES = 6;

/** An integer as a decimal with `places` fraction digits, trailing zeros dropped: exact, no floating point. */
export function decimalOf(value: number, places: number): string {
  const digits = String(value).padStart(places + 1, '0');
  const whole = digits.slice(0, digits.length - places);
  const fraction = digits.slice(digits.length - places).replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : whole;
}

const TOKEN_UNIT_SET: ReadonlySet<PriceUnit> = new Set(TOKEN_UNITS);

function unitsView(prices: Partial<Record<PriceUnit, number>>): Record<string, string> {
  const view: Record<string, string> = {};
  for (const unit of Object.keys(PRICING_KEYS) as PriceUnit[]) {
    const perUnit = prices[unit];
    if (perUnit !== undefined) view[PRICING_KEYS[unit]] = decimalOf(perUnit, TOKEN_UNIT_SET.has(unit) ? TOKEN_PLACES : UNIT_PLACES);
  }
  return view;
}

/**
 * Each dimension the price list names (one it leaves out is billed at the price it falls back to,
 * docs/prices.md), and its long-context tiers, each with the prices past its prompt size.
 */
export function pricingView(price: Price): Record<string, unknown> {
  const view: Record<string, unknown> = unitsView(price);
  if (price.tiers?.length) view.tiers = price.tiers.map((tier) => ({ above_input_tokens: tier.above_input_tokens, ...unitsView(tier) }));
  return view;
}
