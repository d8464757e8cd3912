// Hold estimates made before the upstream is called: everything the request carries, counted with
// the model's tokenizer, plus the output cap. Settlement uses the upstream's real count; the
// charge never exceeds the hold plus the account's overdraft (DESIGN §3).

import type { ModelConfig } from '../config/schema.js';
import { invalidRequest } from '../errors.js';
import { conversationTokens, definitionTokens, type PromptCounting, valueTokens } from './prompt-tokens.js';

/** What counting needs of a model: its id (for messages) and the limits and tokenizer of its config. */
export interface CountingModel {
  id: string;
  config: Pick<ModelConfig, 'tokenizer' | 'image_input_tokens' | 'max_output_tokens'>;
}

export const promptCounting = (model: CountingModel): PromptCounting => ({
  tokenizer: model.config.tokenizer,
  imageTokens: model.config.image_input_tokens,
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
export function chatPromptTokens(body: ChatPrompt, model: CountingModel): number {
  const counting = promptCounting(model);
  return conversationTokens(body.messages, counting) + definitionTokens([body.tools, body.functions, body.tool_choice, body.response_format], counting);
}

export interface MessagesPrompt {
  system?: unknown;
  messages: unknown[];
  tools?: unknown;
  tool_choice?: unknown;
}

/** A messages request's input: system text, the conversation and the tools. */
export function messagesPromptTokens(body: MessagesPrompt, model: CountingModel): number {
  const counting = promptCounting(model);
  return valueTokens(body.system ?? '', counting) + conversationTokens(body.messages, counting) + definitionTokens([body.tools, body.tool_choice], counting);
}

export interface ResponsesPrompt {
  instructions?: unknown;
  input: unknown;
  tools?: unknown;
  tool_choice?: unknown;
  text?: unknown;
}

/** A responses request's input: instructions, the input (text or items) and the tools. */
export function responsesPromptTokens(body: ResponsesPrompt, model: CountingModel): number {
  const counting = promptCounting(model);
  const input = Array.isArray(body.input) ? conversationTokens(body.input, counting) : conversationTokens([body.input], counting);
  return valueTokens(body.instructions ?? '', counting) + input + definitionTokens([body.tools, body.tool_choice, body.text], counting);
}
