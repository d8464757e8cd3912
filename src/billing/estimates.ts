// Hold estimates made before the upstream is called: everything the request carries, counted with
// the model's tokenizer, plus the output cap. Settlement uses the upstream's real count; the
// charge never exceeds the hold plus the account's overdraft (DESIGN §3).

import type { ModelConfig } from '../config/schema.js';
import { invalidRequest } from '../errors.js';
import type { Units } from './prices.js';
import { conversationTokens, definitionTokens, type PromptCounting, valueTokens } from './prompt-tokens.js';
import { countLongText } from './token-worker.js';

/** What counting needs of a model: its id (for messages) and the limits and tokenizer of its config. */
export interface CountingModel {
  id: string;
  config: Pick<ModelConfig, 'tokenizer' | 'image_input_tokens' | 'max_output_tokens'>;
}

/** `longTexts`: where texts to count off the event loop are left (promptTokensOffLoop); none, counted here. */
export const promptCounting = (model: CountingModel, longTexts?: string[]): PromptCounting => ({
  tokenizer: model.config.tokenizer,
  imageTokens: model.config.image_input_tokens,
  longTexts,
});

/**
 * The output cap the request asked for (it goes upstream as asked), else the model's maximum.
 * More than the model's maximum is a 400 naming it: a hold sized on an absurd cap helps nobody.
 */
export function outputTokenCap(field: string, requested: number | null | undefined, model: CountingModel): number {
  const max = model.config.max_output_tokens;
  if (typeof requested !== 'number' || requested <= 0) return max;
  if (requested > max) throw invalidRequest(`${field}: at most ${max} for model ${model.id}, got ${requested}`);
  return requested;
}

export interface ChatPrompt {
  messages: unknown[];
  tools?: unknown;
  functions?: unknown;
  tool_choice?: unknown;
  response_format?: unknown;
}

/** A chat-completions request's input: the conversation and every definition beside it. */
export function chatPromptTokens(body: ChatPrompt, model: CountingModel, counting = promptCounting(model)): number {
  return conversationTokens(body.messages, counting) + definitionTokens([body.tools, body.functions, body.tool_choice, body.response_format], counting);
}

export interface MessagesPrompt {
  system?: unknown;
  messages: unknown[];
  tools?: unknown;
  tool_choice?: unknown;
}

/** A messages request's input: system text, the conversation and the tools. */
export function messagesPromptTokens(body: MessagesPrompt, model: CountingModel, counting = promptCounting(model)): number {
  return valueTokens(body.system ?? '', counting) + conversationTokens(body.messages, counting) + definitionTokens([body.tools, body.tool_choice], counting);
}

export interface ResponsesPrompt {
  instructions?: unknown;
  input?: unknown;
  tools?: unknown;
  tool_choice?: unknown;
  text?: unknown;
}

/** A responses request's input: instructions, the input (text or items) and the tools. */
export function responsesPromptTokens(body: ResponsesPrompt, model: CountingModel, counting = promptCounting(model)): number {
  const input = Array.isArray(body.input) ? conversationTokens(body.input, counting) : conversationTokens([body.input], counting);
  return valueTokens(body.instructions ?? '', counting) + input + definitionTokens([body.tools, body.tool_choice, body.text], counting);
}

export interface GeminiPrompt {
  contents?: unknown;
  systemInstruction?: unknown;
  tools?: unknown;
  toolConfig?: unknown;
  generationConfig?: { responseSchema?: unknown; responseJsonSchema?: unknown; [field: string]: unknown } | null;
}

/** A Gemini API request's input: the system instruction, the contents and the tools and schemas. */
export function geminiPromptTokens(body: GeminiPrompt, model: CountingModel, counting = promptCounting(model)): number {
  const contents = Array.isArray(body.contents) ? body.contents : [];
  const schema = body.generationConfig?.responseSchema ?? body.generationConfig?.responseJsonSchema;
  return (
    valueTokens(body.systemInstruction ?? '', counting) +
    conversationTokens(contents, counting) +
    definitionTokens([body.tools, body.toolConfig, schema], counting)
  );
}

/**
 * A prompt's tokens as `count` makes them, its long texts counted in the token worker
 * (token-worker.ts) so that the event loop serves other calls meanwhile: a number, at once, when it
 * has none (nearly every call), else a promise of the same total.
 */
export function promptTokensOffLoop(model: CountingModel, count: (counting: PromptCounting) => number): number | Promise<number> {
  const long: string[] = [];
  const counting = promptCounting(model, long);
  const here = count(counting);
  if (long.length === 0) return here;
  return Promise.all(long.map((text) => countLongText(text, counting.tokenizer))).then((counts) => counts.reduce((sum, n) => sum + n, here));
}

/** A token estimate: the input as `countInput` counts it (promptTokensOffLoop), and the output cap. */
export function tokenEstimate(model: CountingModel, countInput: (counting: PromptCounting) => number, outputTokens: number): Units | Promise<Units> {
  const input = promptTokensOffLoop(model, countInput);
  return typeof input === 'number' ? { input_token: input, output_token: outputTokens } : input.then((n) => ({ input_token: n, output_token: outputTokens }));
}
