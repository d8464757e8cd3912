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
  const input = whole(usage.input);
  const output = whole(usage.output);
  const inputParts = [
    ['cached_input_token', whole(usage.cacheRead)],
    ['cache_write_1h_token', Math.min(whole(usage.cacheWrite1h), whole(usage.cacheWrite))],
    ['cache_write_token', whole(usage.cacheWrite) - Math.min(whole(usage.cacheWrite1h), whole(usage.cacheWrite))],
    ['audio_input_token', whole(usage.audioInput)],
    ['image_input_token', whole(usage.imageInput)],
  ] as const;
  const outputParts = [
    ['reasoning_token', whole(usage.reasoning)],
    ['audio_output_token', whole(usage.audioOutput)],
  ] as const;
  const units: Units = { input_token: input, output_token: output };
  units.input_token = split(units, input, inputParts);
  units.output_token = split(units, output, outputParts);
  if (usage.webSearch) units.web_search = whole(usage.webSearch);
  return units;
}

/** Writes each part into `units` (up to what is left of `total`) and answers what remains. */
function split(units: Units, total: number, parts: readonly (readonly [keyof Units, number])[]): number {
  let left = total;
  for (const [unit, count] of parts) {
    const taken = Math.min(count, left);
    if (taken > 0) units[unit] = taken;
    left -= taken;
  }
  return left;
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
