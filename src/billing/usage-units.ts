// Usage as the upstream reported it, read into the price units it is billed in. Every upstream
// format is first read into the pivot's usage (pivot/types.ts), one set of meanings; this turns it
// into disjoint units, so each token is billed once, at its own dimension's price.
import type { PivotUsage } from '../pivot/types.js';
import type { Units } from './prices.js';

/**
 * The pivot counts every prompt token in `input` and every generated one in `output`; the units
 * split each into its parts: fresh text input beside cache reads, cache writes (5-minute and 1-hour),
 * audio and image input; text output beside reasoning and audio output. Parts an upstream reports
 * beyond the whole are trimmed to it (never a negative unit). Dimensions of zero are left out.
 */
export function unitsOfPivot(usage: PivotUsage): Units {
  // A whole that is not a sane figure is passed on as reported, unsplit: the settle replaces it by
  // the gateway's own count and flags it (billing/prices.ts saneUnits), which a 0 here would hide.
  if (!isCount(usage.input) || !isCount(usage.output)) return { input_token: usage.input, output_token: usage.output };
  // input_token and output_token first, as every usage row has always listed them.
  const units: Units = { input_token: 0, output_token: 0 };
  const writes = whole(usage.cacheWrite);
  const writes1h = Math.min(whole(usage.cacheWrite1h), writes);
  let input = whole(usage.input);
  input = takePart(units, 'cached_input_token', whole(usage.cacheRead), input);
  input = takePart(units, 'cache_write_1h_token', writes1h, input);
  input = takePart(units, 'cache_write_token', writes - writes1h, input);
  input = takePart(units, 'audio_input_token', whole(usage.audioInput), input);
  units.input_token = takePart(units, 'image_input_token', whole(usage.imageInput), input);
  let output = whole(usage.output);
  output = takePart(units, 'reasoning_token', whole(usage.reasoning), output);
  units.output_token = takePart(units, 'audio_output_token', whole(usage.audioOutput), output);
  if (usage.webSearch) units.web_search = whole(usage.webSearch);
  return units;
}

/** Writes up to `left` of `count` as `unit` (nothing when none) and answers what remains of the whole. */
function takePart(units: Units, unit: keyof Units, count: number, left: number): number {
  const taken = Math.min(count, left);
  if (taken > 0) units[unit] = taken;
  return left - taken;
}

const isCount = (figure: unknown): figure is number => typeof figure === 'number' && figure >= 0 && Number.isFinite(figure);

const whole = (count: number | undefined): number => (typeof count === 'number' && count > 0 ? Math.ceil(count) : 0);

/** Every output-side unit together: what the model generated. */
export const outputOf = (units: Units): number => (units.output_token ?? 0) + (units.reasoning_token ?? 0) + (units.audio_output_token ?? 0);

/** Every input-side token unit together: the prompt's size, which picks a long-context tier. */
export const promptOf = (units: Units): number =>
  (units.input_token ?? 0) +
  (units.cached_input_token ?? 0) +
  (units.cache_write_token ?? 0) +
  (units.cache_write_1h_token ?? 0) +
  (units.audio_input_token ?? 0) +
  (units.image_input_token ?? 0);

/**
 * A stream cut short or left: the upstream's figures so far, its output at least what the gateway
 * counted as delivered (the upstream's running count may lag behind), the difference as text output.
 */
export function atLeastDelivered(units: Units, delivered: number): Units {
  const missing = delivered - outputOf(units);
  return missing > 0 ? { ...units, output_token: (units.output_token ?? 0) + missing } : units;
}

/** The prompt side of a usage alone, with `output` text tokens (a stream whose output the upstream has not reported yet). */
export function withCountedOutput(units: Units, output: number): Units {
  const prompt: Units = { ...units, output_token: output };
  delete prompt.reasoning_token;
  delete prompt.audio_output_token;
  return prompt;
}
