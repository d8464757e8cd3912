// Model prices as the Models and prices page shows them. The API gives decimal strings per token;
// people compare prices per million tokens, so the decimal point is moved by string arithmetic and
// no float ever holds a price. (No imports: the tests load this file as it is.)

/** The dimensions billed per token: shown per million tokens. */
export const TOKEN_KEYS: ReadonlySet<string> = new Set([
  'prompt',
  'completion',
  'input_cache_read',
  'input_cache_write',
  'input_cache_write_1h',
  'internal_reasoning',
  'input_audio',
  'output_audio',
  'input_image',
]);

/** Every dimension's name on the page (api.ts's PricingKey), in the order the details list them. */
export const PRICING_LABELS = {
  prompt: 'input',
  input_cache_read: 'cached input',
  input_cache_write: 'cache write',
  input_cache_write_1h: 'cache write (1 hour)',
  input_audio: 'audio input',
  input_image: 'image input',
  completion: 'output',
  internal_reasoning: 'reasoning',
  output_audio: 'audio output',
  request: 'request',
  web_search: 'web search',
  image: 'image',
  character: 'character',
  second: 'second',
} as const;
type PricingKey = keyof typeof PRICING_LABELS;

const PER: Record<PricingKey, string> = {
  ...(Object.fromEntries([...TOKEN_KEYS].map((key) => [key, 'per 1M tokens'])) as Record<PricingKey, string>),
  request: 'per request',
  web_search: 'per search',
  image: 'per image',
  character: 'per character',
  second: 'per second',
};

/** What a dimension's figure is counted per: "per 1M tokens", "per search"… */
export const perWhat = (key: PricingKey): string => PER[key];

/**
 * A decimal with its point moved `places` to the right, without trailing zeros and with its whole
 * part grouped by thousands: ("0.000003", 6) → "3", ("0.0000025", 6) → "2.5", ("1500", 0) → "1,500".
 * Text that is not a decimal is given back as it came.
 */
export function shiftDecimal(text: string, places: number): string {
  const match = /^(-?)(\d*)(?:\.(\d*))?(?:e([+-]?\d+))?$/i.exec(text.trim());
  if (!match || `${match[2]}${match[3] ?? ''}` === '') return text;
  const [, sign, whole = '', fraction = '', exponent = '0'] = match;
  const digits = `${whole}${fraction}`;
  const point = whole.length + places + Number(exponent);
  const padded = point <= 0 ? `${'0'.repeat(1 - point)}${digits}` : digits.padEnd(point, '0');
  const at = Math.max(point, 1);
  const wholePart = padded.slice(0, at).replace(/^0+(?=\d)/, '');
  const fractionPart = padded.slice(at).replace(/0+$/, '');
  const shown = `${wholePart.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}${fractionPart ? `.${fractionPart}` : ''}`;
  return sign && /[1-9]/.test(shown) ? `-${shown}` : shown;
}

/** A dimension's price as shown: per million tokens for a token dimension, else per unit. */
export const shownRate = (key: PricingKey, perUnit: string): string => shiftDecimal(perUnit, TOKEN_KEYS.has(key) ? 6 : 0);
