// What a transcription is billed on, read from the upstream's answer (pure functions): its
// `usage` (seconds of audio, or tokens), verbose_json's `duration`, or else the audio's length as
// the gateway measured it, which the hold was sized from.
import type { Units } from '../../billing/prices.js';
import type { ModelConfig } from '../../config/schema.js';

export const RESPONSE_FORMATS = ['json', 'text', 'srt', 'verbose_json', 'vtt'] as const;
export type ResponseFormat = (typeof RESPONSE_FORMATS)[number];

/** The formats answered as JSON; the others are plain text, with no usage in them. */
export const isJsonFormat = (format: ResponseFormat) => format === 'json' || format === 'verbose_json';

/** Usage as the upstream reported it; figures unchecked (the pipeline makes them sane). */
export type ReportedUsage = { type: 'duration'; seconds: unknown } | { type: 'tokens'; inputTokens: unknown; outputTokens: unknown };

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** `usage: {type: "duration", seconds}` or `usage: {type: "tokens", input_tokens, output_tokens}`, else verbose_json's `duration`. */
export function reportedUsage(answer: unknown): ReportedUsage | undefined {
  if (!isRecord(answer)) return undefined;
  const { usage } = answer;
  if (isRecord(usage)) {
    if (usage.type === 'duration' && usage.seconds !== undefined) return { type: 'duration', seconds: usage.seconds };
    if (usage.type === 'tokens') return { type: 'tokens', inputTokens: usage.input_tokens, outputTokens: usage.output_tokens };
  }
  if (answer.duration !== undefined) return { type: 'duration', seconds: answer.duration };
  return undefined;
}

const pricesTokens = (model: ModelConfig) => Boolean(model.price.input_token || model.price.output_token);
const pricesSeconds = (model: ModelConfig) => Boolean(model.price.second);

/**
 * The units a transcription is billed: the upstream's tokens, for a model priced in tokens; its
 * seconds, for a model priced in seconds; otherwise `measured` (the hold's estimate, from the
 * length of the audio), whatever the upstream left out or reported in units the model is not priced in.
 */
export function billedUnits(reported: ReportedUsage | undefined, model: ModelConfig, measured: Units): Units {
  if (reported?.type === 'tokens' && pricesTokens(model)) {
    return { input_token: reported.inputTokens as number, output_token: reported.outputTokens as number };
  }
  if (reported?.type === 'duration' && pricesSeconds(model)) return { second: reported.seconds as number };
  return measured;
}

// Hold estimate only, for a model priced in tokens (settlement uses the upstream's count): audio
// runs near 17 tokens a second in OpenAI's transcription models, and speech rarely says more than
// 4 tokens a second back; both held with room to spare.
const INPUT_TOKENS_PER_SECOND = 25;
const OUTPUT_TOKENS_PER_SECOND = 10;

/**
 * What a transcription holds: the audio's length in whole seconds (at least one), and for a model
 * priced in tokens, the tokens that audio and the prompt (at most a token a byte) come to.
 */
export function transcriptionEstimate(durationSeconds: number, promptBytes: number, model: ModelConfig): Units {
  const second = Math.max(1, Math.ceil(durationSeconds));
  if (!pricesTokens(model)) return { second };
  return { second, input_token: second * INPUT_TOKENS_PER_SECOND + promptBytes, output_token: second * OUTPUT_TOKENS_PER_SECOND };
}
