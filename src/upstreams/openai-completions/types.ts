// OpenAI's legacy completions API (`POST /v1/completions`): the fields the gateway reads. Every
// other field (temperature, logprobs, echo, suffix, user…) goes to the upstream as sent.
import type { ChatUsage } from '../openai-chat/types.js';

/** A prompt: a string, strings, token ids, or arrays of token ids. */
export type CompletionPrompt = string | string[] | number[] | number[][];

export interface CompletionRequest {
  model: string;
  prompt: CompletionPrompt;
  suffix?: string | null;
  max_tokens?: number | null;
  n?: number | null;
  best_of?: number | null;
  stream?: boolean | null;
  stream_options?: { include_usage?: boolean | null; [field: string]: unknown } | null;
  [field: string]: unknown;
}

export interface CompletionChoice {
  index?: number;
  text?: unknown;
  finish_reason?: string | null;
  [field: string]: unknown;
}

/** A whole answer (`object: "text_completion"`), or one chunk of a stream (the same shape). */
export interface Completion {
  id?: string;
  object?: string;
  model?: string;
  choices?: CompletionChoice[];
  usage?: ChatUsage | null;
  [field: string]: unknown;
}
