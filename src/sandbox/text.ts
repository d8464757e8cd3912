import { createHash } from 'node:crypto';

// The sandbox's "model": every answer is a pure function of the request, so a test can compute the
// exact text and usage (and so the bill), and a stream and a plain call with the same input agree.

/** Past this a `[[words:N]]` reply is refused: the answer is built in memory. */
export const MAX_REPLY_WORDS = 100_000;

const WORDS_DIRECTIVE = /\[\[words:(\d+)\]\]/;
const TOOL_DIRECTIVE = /\[\[tool:([^\]\s]+)\]\]/g;
// at most 9 digits: a count a test can price, never past a safe integer once added up
const USAGE_DIRECTIVE = /\[\[(cached|cache_write|cache_write_1h|reasoning|web_search):(\d{1,9})\]\]/g;

export function words(text: string): string[] {
  return text.split(/\s+/).filter((word) => word !== '');
}

/** A message's text: a string, or the `text` of its `{type:'text'}` parts joined by spaces. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const texts: string[] = [];
  for (const part of content) {
    if (isRecord(part) && part.type === 'text' && typeof part.text === 'string') texts.push(part.text);
  }
  return texts.join(' ');
}

/** 1 per message, plus the words of its text and of its tool calls' `arguments`. */
export function messageTokens(message: unknown): number {
  if (!isRecord(message)) return 1;
  let count = 1 + words(contentText(message.content)).length;
  if (Array.isArray(message.tool_calls)) {
    for (const call of message.tool_calls) {
      const args = isRecord(call) && isRecord(call.function) ? call.function.arguments : undefined;
      if (typeof args === 'string') count += words(args).length;
    }
  }
  return count;
}

export function promptTokens(messages: readonly unknown[]): number {
  return messages.reduce<number>((sum, message) => sum + messageTokens(message), 0);
}

/** The text of the last message whose role is `user`, or '' when there is none. */
export function lastUserText(messages: readonly unknown[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (isRecord(message) && message.role === 'user') return contentText(message.content);
  }
  return '';
}

export type PlannedReply =
  | { type: 'text'; words: string[]; truncated: boolean; stopSequence: string | null; outputTokens: number }
  | { type: 'tool'; name: string; arguments: string; outputTokens: number };

export interface ReplyInput {
  userText: string;
  /** Names of the functions the request offers; a `[[tool:NAME]]` directive only calls one of these. */
  toolNames?: readonly string[];
  /** The smallest output token limit the request set, if any. */
  maxTokens?: number | undefined;
  /** Stop sequences; one that equals a word of the reply ends it before that word. */
  stopSequences?: readonly string[];
  /** What the request's tool_choice demands (see `readToolChoice`). */
  toolChoice?: ToolChoice;
}

/** `none`: no tool may be called; `forced`: this tool must be (required/any: the first one offered). */
export type ToolChoice = { none: true } | { forced: string } | Record<string, never>;

/**
 * tool_choice in any of the three protocols' shapes: chat (`"required"`, `{type:"function",
 * function:{name}}`), messages (`{type:"any"}`, `{type:"tool",name}`, `{type:"none"}`) and responses
 * (`"required"`, `{type:"function",name}`); `"none"` in all of them. Anything else leaves it to the model.
 */
export function readToolChoice(choice: unknown, toolNames: readonly string[]): ToolChoice {
  const type = isRecord(choice) ? choice.type : choice;
  if (type === 'none') return { none: true };
  if (type === 'required' || type === 'any') return toolNames[0] === undefined ? {} : { forced: toolNames[0] };
  if (isRecord(choice) && (type === 'function' || type === 'tool')) {
    const name = isRecord(choice.function) ? choice.function.name : choice.name;
    if (typeof name === 'string' && toolNames.includes(name)) return { forced: name };
  }
  return {};
}

function toolCall(name: string, userText: string, directive?: string): PlannedReply {
  const query = words(directive ? userText.replace(directive, ' ') : userText).join(' ');
  const args = JSON.stringify({ query });
  // +1: the call itself (its name) costs a token beyond its arguments
  return { type: 'tool', name, arguments: args, outputTokens: words(args).length + 1 };
}

/**
 * `[[tool:NAME]]` (NAME offered) → a call to NAME with `{"query": <the other words>}`; a tool_choice
 * that forces a tool calls it (a directive for another tool gives way), `none` calls none;
 * `[[words:N]]` → `w1 … wN`; otherwise `Sandbox says: <the user's words>`. Text ends before the first word
 * equal to a stop sequence, then is cut to `maxTokens` words (the limit wins when both apply).
 */
export function planReply({ userText, toolNames = [], maxTokens, stopSequences = [], toolChoice = {} }: ReplyInput): PlannedReply {
  const forced = 'forced' in toolChoice ? toolChoice.forced : undefined;
  for (const match of 'none' in toolChoice ? [] : userText.matchAll(TOOL_DIRECTIVE)) {
    const name = match[1] as string;
    if (!toolNames.includes(name) || (forced !== undefined && name !== forced)) continue;
    return toolCall(name, userText, match[0]);
  }
  // tool_choice demands a call the prompt did not ask for: the forced tool, with the prompt as its query
  if (forced !== undefined) return toolCall(forced, userText);
  const wanted = WORDS_DIRECTIVE.exec(userText);
  const full = wanted ? Array.from({ length: Number(wanted[1]) }, (_, i) => `w${i + 1}`) : ['Sandbox', 'says:', ...words(userText)];
  const stopAt = stopSequences.length === 0 ? -1 : full.findIndex((word) => stopSequences.includes(word));
  const end = stopAt === -1 ? full.length : stopAt;
  const truncated = maxTokens !== undefined && maxTokens < end;
  const kept = full.slice(0, truncated ? maxTokens : end);
  const stopSequence = truncated || stopAt === -1 ? null : (full[stopAt] as string);
  return { type: 'text', words: kept, truncated, stopSequence, outputTokens: kept.length };
}

/** The N a `[[words:N]]` directive asks for, so a handler can refuse one too large before building it. */
export function requestedWords(userText: string): number | undefined {
  const wanted = WORDS_DIRECTIVE.exec(userText);
  return wanted ? Number(wanted[1]) : undefined;
}

/**
 * What the usage directives of a prompt ask an answer to report beyond the prompt and the reply it
 * counts, each kind in its own usage fields: `[[cached:N]]` prompt tokens read from the cache and
 * `[[cache_write:N]]`, `[[cache_write_1h:N]]` written to it (all three on top of the counted prompt, as
 * if a long cached system prompt were there), `[[reasoning:N]]` reasoning tokens on top of the reply,
 * `[[web_search:N]]` server-side web searches. The first of each name counts.
 */
export interface UsageDirectives {
  cached: number;
  cacheWrite: number;
  cacheWrite1h: number;
  reasoning: number;
  webSearch: number;
}

const USAGE_FIELDS: Record<string, keyof UsageDirectives> = {
  cached: 'cached',
  cache_write: 'cacheWrite',
  cache_write_1h: 'cacheWrite1h',
  reasoning: 'reasoning',
  web_search: 'webSearch',
};

/** The usage directives of `userText`, or undefined when it has none: the answer is then exactly as without them. */
export function usageDirectives(userText: string): UsageDirectives | undefined {
  const found: Partial<UsageDirectives> = {};
  for (const [, name, count] of userText.matchAll(USAGE_DIRECTIVE)) {
    const field = USAGE_FIELDS[name as string] as keyof UsageDirectives;
    found[field] ??= Number(count);
  }
  if (Object.keys(found).length === 0) return undefined;
  return { cached: 0, cacheWrite: 0, cacheWrite1h: 0, reasoning: 0, webSearch: 0, ...found };
}

/** Splits a string into word-sized pieces (each with its leading spaces) that concatenate back to it. */
export function wordPieces(text: string): string[] {
  return text.match(/\s*\S+\s*$|\s*\S+/g) ?? (text === '' ? [] : [text]);
}

/** A short stable id for a request: the same body always gets the same id. */
export function hashOf(value: unknown): string {
  return createHash('sha256')
    .update(JSON.stringify(value) ?? '')
    .digest('hex')
    .slice(0, 24);
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
