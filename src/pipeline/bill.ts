// What a call is billed, decided from how it ended (DESIGN §3 and §5). Pure functions: the
// pipeline applies them, the tests read them as the rules.

import { clampedFlag, priceMicros, saneUnits, type Units, withRequestFee } from '../billing/prices.js';
import type { ModelConfig } from '../config/schema.js';
import { withFields } from '../with-fields.js';
import type { StreamMeter } from './types.js';

export type Bill = { kind: 'settle'; units: Units; reason: string } | { kind: 'release'; reason: string };

/**
 * How a stream ends, in order: an upstream error or a stream that ends without its end marker
 * is the upstream's failure, released in full whatever the caller saw; a completed stream is
 * billed on the upstream's usage; a stream the caller left is billed for what was made.
 */
export function streamBill(meter: StreamMeter, { callerLeft, estimate }: { callerLeft: boolean; estimate: Units }): Bill {
  if (meter.failed) return { kind: 'release', reason: 'the upstream reported an error in the stream' };
  if (meter.completed) return { kind: 'settle', units: meter.reported() ?? made(meter, estimate), reason: 'completed' };
  if (callerLeft) return leftBill(meter, estimate);
  return { kind: 'release', reason: 'the upstream ended the stream before its end marker' };
}

/**
 * A stream its caller left once its answer had begun (DESIGN §5). Audio whose upstream reports
 * usage only at its end: the units the audio delivered covers, else the estimate (what the text
 * costs whole), and nothing when no audio came. Tokens: the upstream's usage where it gave one,
 * else the prompt counted plus the output delivered, never the output cap.
 */
function leftBill(meter: StreamMeter, estimate: Units): Bill {
  const audio = meter.audioCovered?.();
  if (audio?.kind === 'none') return { kind: 'release', reason: 'the caller left before any audio came' };
  if (audio) return { kind: 'settle', units: audio.kind === 'measured' ? audio.units : estimate, reason: 'the caller left' };
  return { kind: 'settle', units: meter.reported() ?? made(meter, estimate), reason: 'the caller left' };
}

/**
 * A call that failed before its answer began: released, whoever gave up first, when the upstream
 * had sent nothing (no status line: a hang, a call still waiting for a connection) or no audio; a
 * token stream the caller left after the upstream's status line, before its first data, is billed
 * what was made by then, the prompt.
 */
export function unansweredBill({
  callerLeft,
  sent,
  begun,
  estimate,
}: {
  callerLeft: boolean;
  /** False when the call never left the gateway (it waited for a connection). */
  sent: boolean;
  /** The meter of the stream whose status line had come, when one had. */
  begun: StreamMeter | undefined;
  estimate: Units;
}): Bill {
  if (!callerLeft) return { kind: 'release', reason: 'upstream failed' };
  if (!sent) return { kind: 'release', reason: 'the caller left before the call was sent' };
  if (!begun) return { kind: 'release', reason: 'the caller left before the upstream answered' };
  if (begun.audioCovered) return { kind: 'release', reason: 'the caller left before any audio came' };
  return { kind: 'settle', units: promptOf(estimate), reason: 'the caller left before the first byte' };
}

/** The prompt as the gateway counted it. */
const promptOf = (estimate: Units): Units => (estimate.input_token === undefined ? {} : { input_token: estimate.input_token });

/** The prompt as the gateway counted it, plus the output delivered so far. */
export function made(meter: StreamMeter, estimate: Units): Units {
  return { ...promptOf(estimate), ...meter.delivered() };
}

/**
 * The most each unit may sanely come to: the request's own estimate (the text to speak, one
 * search call, the output cap asked for); input tokens up to the model's context window (another
 * tokenizer may count a prompt higher than the gateway's own count).
 */
export function usageBounds(estimate: Units, model: ModelConfig): Units {
  const prompt = Math.max(estimate.input_token ?? 0, model.context_window);
  const output = estimate.output_token ?? model.max_output_tokens;
  return withFields(estimate, {
    input_token: prompt,
    cached_input_token: prompt,
    cache_write_token: prompt,
    cache_write_1h_token: prompt,
    audio_input_token: prompt,
    image_input_token: prompt,
    output_token: output,
    reasoning_token: output,
    audio_output_token: output,
  });
}

/**
 * Usage made sane (never thrown on) and priced. A negative or non-numeric figure is replaced by
 * `counted`, the gateway's own count of what was made (the estimate, the whole hold, only where
 * there is none); the flags say `clamped`, then each figure that was replaced as reported.
 */
export function priceUsage(units: Units, estimate: Units, model: ModelConfig, counted?: () => Units): { units: Units; chargeMicros: number; flags: string[] } {
  const sane = saneUnits(units, { bounds: usageBounds(estimate, model), fallback: counted ?? estimate });
  const flags = sane.clamped ? ['clamped'] : [];
  for (const unit in sane.replaced) flags.push(clampedFlag(unit, sane.replaced[unit as keyof Units]));
  const billed = withRequestFee(sane.units, model.price);
  return { units: billed, chargeMicros: priceMicros(billed, model.price), flags };
}
