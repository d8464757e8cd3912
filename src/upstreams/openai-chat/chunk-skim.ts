// Most chunks of a chat completion stream carry one piece of text and nothing else a reader needs.
// Reading that text without parsing the whole chunk saves the stream its largest cost per chunk
// (JSON.parse building the chunk's object and its keys). Any other shape, or any doubt, is
// answered with undefined, and the caller parses the chunk as before.
import type { ChatCompletionChunk } from './types.js';

// The chunk's first choice, as OpenAI (and the sandbox) write it: index 0 first, then its delta.
const FIRST_CHOICE_TEXT = '"choices":[{"index":0,"delta":{"content":"';
// Keys that, anywhere outside the text, mean the chunk carries more than text for its readers.
const OTHER_KEYS = ['"delta"', '"error"', '"tool_calls"', '"reasoning'];
// Keys a text chunk may carry only as null.
const NULL_KEYS = ['"usage"', '"finish_reason"'];
// Open after the delta's object closes: the outer object, the choices array and the first choice.
const OPEN_AFTER_DELTA = 3;
const OPEN_BRACE = 123;
const QUOTE = 34;
const BACKSLASH = 92;
const CLOSE_BRACE = 125;
const OPEN_BRACKET = 91;
const CLOSE_BRACKET = 93;

/**
 * The text of a chunk whose first choice's delta is exactly `{"content":"…"}`, with no usage and no
 * finish reason (absent or null), no error, no tool calls, no reasoning and no other delta;
 * undefined otherwise.
 * A key's name with its quotes cannot occur inside a JSON string (its quotes would be escaped), so
 * finding one outside the text means the chunk has that key.
 */
export function plainTextDelta(data: string): string | undefined {
  const found = findText(data);
  return found && checked(data, found) ? textOf(data, found) : undefined;
}

/**
 * Reads the text chunks of one stream. They differ only in their text: what surrounds it (the id,
 * the model, the choice's other fields, the usage) repeats, so once it has been checked, a chunk
 * with the same surroundings needs only its text read, without searching it for keys again.
 */
export class TextChunkSkimmer {
  /** The last text chunk up to its text's opening quote, and from the end of its delta. */
  private around: { head: string; tail: string } | undefined;

  read(data: string): string | undefined {
    const around = this.around;
    if (around && data.startsWith(around.head)) {
      const found = textFrom(data, around.head.length - 1);
      if (found && data.length - around.tail.length === found.close + 2 && data.endsWith(around.tail)) return textOf(data, found);
    }
    const found = findText(data);
    if (!found || !checked(data, found)) return undefined;
    this.around = { head: data.slice(0, found.open + 1), tail: data.slice(found.close + 2) };
    return textOf(data, found);
  }
}

interface FoundText {
  /** Where the first choice's text begins: the index of its opening quote. */
  head: number;
  open: number;
  /** Its closing quote. */
  close: number;
  escaped: boolean;
}

function findText(data: string): FoundText | undefined {
  const head = data.indexOf(FIRST_CHOICE_TEXT);
  if (head === -1) return undefined;
  const found = textFrom(data, head + FIRST_CHOICE_TEXT.length - 1);
  return found && { ...found, head };
}

/** The JSON string opening at `open`, when the delta's object closes right after it. */
function textFrom(data: string, open: number): Omit<FoundText, 'head'> | undefined {
  let close = open + 1;
  let escaped = false;
  for (; close < data.length; close++) {
    const c = data.charCodeAt(close);
    if (c === QUOTE) break;
    if (c === BACKSLASH) {
      escaped = true;
      close++;
    }
  }
  return data.charCodeAt(close + 1) === CLOSE_BRACE ? { open, close, escaped } : undefined;
}

/** What surrounds the text: one top-level object, holding nothing else a reader of the chunk needs. */
function checked(data: string, { head, close }: FoundText): boolean {
  if (data.charCodeAt(0) !== OPEN_BRACE || data.charCodeAt(data.length - 1) !== CLOSE_BRACE) return false;
  // The choices are the outer object's own, and what follows the delta closes its choice, the
  // array and that object only at the very end (a chunk cut short is parsed, and fails there).
  if (depthAfter(data, 1, head, 1) !== 1 || depthAfter(data, close + 2, data.length - 1, OPEN_AFTER_DELTA) !== 1) return false;
  const before = data.slice(0, head);
  const after = data.slice(close + 2);
  for (const key of OTHER_KEYS) if (before.includes(key) || after.includes(key)) return false;
  for (const key of NULL_KEYS) if (!nullWherever(before, key) || !nullWherever(after, key)) return false;
  return true;
}

function textOf(data: string, { open, close, escaped }: Omit<FoundText, 'head'>): string | undefined {
  if (!escaped) return data.slice(open + 1, close);
  try {
    return JSON.parse(data.slice(open, close + 1)) as string;
  } catch {
    return undefined;
  }
}

/**
 * A text chunk as its readers (the meter, the Messages translator) see it: only its first choice's
 * delta, finish reason and the usage are read, and here they are known without a parse.
 */
export function textChunk(text: string): ChatCompletionChunk {
  return { choices: [{ index: 0, delta: { content: text }, finish_reason: null }], usage: null } as unknown as ChatCompletionChunk;
}

/** Every `key` in `part` (a key with its quotes) has the value null. */
function nullWherever(part: string, key: string): boolean {
  for (let at = part.indexOf(key); at !== -1; at = part.indexOf(key, at + 1)) {
    if (!part.startsWith(':null', at + key.length)) return false;
  }
  return true;
}

/**
 * The nesting depth (objects and arrays, outside strings) after reading `data` from `from` to `to`,
 * starting at `depth`; -1 if it closes everything before `to`.
 */
function depthAfter(data: string, from: number, to: number, depth: number): number {
  for (let i = from; i < to; i++) {
    const c = data.charCodeAt(i);
    if (c === QUOTE) {
      for (i++; i < to && data.charCodeAt(i) !== QUOTE; i++) if (data.charCodeAt(i) === BACKSLASH) i++;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
    else if ((c === CLOSE_BRACE || c === CLOSE_BRACKET) && --depth === 0) return -1;
  }
  return depth;
}
