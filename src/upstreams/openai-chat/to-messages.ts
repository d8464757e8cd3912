// An OpenAI chat completion as a Messages answer (chat-formats.md §3.5–3.7). Pure: the caller
// passes the message id and the model name the client asked for.
import type { ContentBlock, Message, MessagesUsage, StopReason } from '../anthropic/types.js';
import type { ChatCompletion, ChatToolCall, ChatUsage } from './types.js';

const STOP: Record<string, StopReason> = {
  stop: 'end_turn',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  function_call: 'tool_use',
  content_filter: 'refusal',
};

/**
 * Never `stop_sequence`: OpenAI says `stop` both for a natural end and for a matched stop
 * sequence, and strips the sequence from the text, so even a request that set stop_sequences
 * cannot tell which happened. `end_turn` (with `stop_sequence: null`) is the honest answer.
 */
export function stopReasonOf(finish: string | null | undefined): StopReason {
  return STOP[finish ?? ''] ?? 'end_turn';
}

/**
 * The finish reason as an Anthropic client must see it. Some OpenAI-compatible servers end a turn
 * that called tools with `stop`; an agent loop reading `end_turn` would never run the tools.
 */
export function stopReasonFor(finish: string | null | undefined, calledTools: boolean): StopReason {
  const reason = stopReasonOf(finish);
  return calledTools && reason === 'end_turn' ? 'tool_use' : reason;
}

/**
 * OpenAI counts cached tokens inside `prompt_tokens`; Anthropic's `input_tokens` is the uncached
 * rest (§3.6), so both cache counts come out of it. Cache fields appear only when non-zero.
 */
export function messagesUsageOf(usage: ChatUsage | undefined | null): MessagesUsage {
  if (!usage) return { input_tokens: 0, output_tokens: 0 };
  const cacheRead = usage.prompt_tokens_details?.cached_tokens ?? 0;
  const cacheWrite = usage.prompt_tokens_details?.cache_write_tokens ?? 0;
  const out: MessagesUsage = {
    input_tokens: Math.max((usage.prompt_tokens ?? 0) - cacheRead - cacheWrite, 0),
    output_tokens: usage.completion_tokens ?? 0,
  };
  if (cacheWrite > 0) out.cache_creation_input_tokens = cacheWrite;
  if (cacheRead > 0) out.cache_read_input_tokens = cacheRead;
  return out;
}

/**
 * A tool input must be an object. Empty arguments mean a call without any (`{}`); text that is
 * not a JSON object is kept whole under `_raw` rather than lost, so the client can still see what
 * the model wrote and answer with an error result.
 */
export function toolInputOf(args: string | null | undefined): Record<string, unknown> {
  if (!args || args.trim() === '') return {};
  try {
    const input: unknown = JSON.parse(args);
    if (input !== null && typeof input === 'object' && !Array.isArray(input)) return input as Record<string, unknown>;
  } catch {
    // falls through to _raw
  }
  return { _raw: args };
}

export function chatToMessage(chat: ChatCompletion, ids: { id: string; model: string }): Message {
  const choice = chat.choices?.[0];
  const message = choice?.message;
  const content: ContentBlock[] = [];
  // reasoning has no signature upstream; "" marks it as ours (from-messages drops it on the way back)
  if (message?.reasoning_content) content.push({ type: 'thinking', thinking: message.reasoning_content, signature: '' });
  const text = message?.content || message?.refusal;
  if (text) content.push({ type: 'text', text });
  const calls = (message?.tool_calls ?? []).filter(isToolCall);
  calls.forEach((call, i) => {
    content.push({ type: 'tool_use', id: call.id || `${ids.id}_call_${i}`, name: call.function.name, input: toolInputOf(call.function.arguments) });
  });
  return {
    id: ids.id,
    type: 'message',
    role: 'assistant',
    model: ids.model,
    content,
    stop_reason: stopReasonFor(choice?.finish_reason, calls.length > 0),
    stop_sequence: null,
    usage: messagesUsageOf(chat.usage),
  };
}

function isToolCall(value: unknown): value is ChatToolCall {
  if (value === null || typeof value !== 'object') return false;
  const fn = (value as { function?: unknown }).function;
  return fn !== null && typeof fn === 'object' && typeof (fn as { name?: unknown }).name === 'string';
}
