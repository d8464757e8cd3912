// Most chunks of a chat completion stream carry one piece of text and nothing else a reader needs.
// Reading that text without parsing the whole chunk saves the stream its largest cost per chunk
// (JSON.parse building the chunk's object and its keys). Any other shape, or any doubt, is
// answered with undefined, and the caller parses the chunk as before.
import { CLOSE_BRACE, closingQuote, closingQuoteInBytes, OPEN_BRACE, walkNesting } from '../../json-text.js';
import { addStringPiece, type PieceSink } from '../stream-meter.js';

// The chunk's first choice, as OpenAI (and the sandbox) write it: index 0 first, then its delta.
const FIRST_CHOICE_TEXT = '"choices":[{"index":0,"delta":{"content":"';
// Keys that, anywhere in a chunk, mean it carries something the meter reads, whatever their value.
const METERED_KEYS = ['"error"', '"tool_calls"', '"reasoning'];
// Keys that, anywhere outside the text, mean the chunk carries more than text for its readers.
const OTHER_KEYS = ['"delta"', ...METERED_KEYS];
// Keys a text chunk may carry only as null.
const NULL_KEYS = ['"usage"', '"finish_reason"'];
// Open after the delta's object closes: the outer object, the choices array and the first choice.
const OPEN_AFTER_DELTA = 3;

/**
 * The text of a chunk whose first choice's delta is exactly `{"content":"…"}`, with no usage and no
 * finish reason (absent or null), no error, no tool calls, no reasoning and no other delta;
 * undefined otherwise.
 * A key's name with its quotes cannot occur inside a JSON string (its quotes would be escaped), so
 * finding one outside the text means the chunk has that key.
 */
export function plainTextDelta(data: string): string | undefined {
  return new TextChunkSkimmer().read(data);
}

/**
 * Reads the text chunks of one stream. They differ only in their text: what surrounds it (the id,
 * the model, the choice's other fields, the usage) repeats, so once it has been checked, a chunk
 * with the same surroundings needs only its text read, without searching it for keys again.
 */
export class TextChunkSkimmer {
  /** The last text chunk up to its text's opening quote, and from the end of its delta. */
  private around: { head: string; tail: string } | undefined;
  /** The same as UTF-8 bytes, for chunks read before they are decoded. */
  private aroundBytes: { head: Buffer; tail: Buffer } | undefined;

  read(data: string): string | undefined {
    const around = this.around;
    // Compared as a cut of equal length, not with startsWith: V8's startsWith walks a long prefix
    // character by character (measured: about 600 ns for this 160-character head, against 50).
    if (around && data.slice(0, around.head.length) === around.head) {
      const open = around.head.length - 1;
      const close = closeOfText(data, open);
      if (close !== -1 && data.length - around.tail.length === close + 2 && data.endsWith(around.tail)) return textOf(data, open, close);
    }
    const head = data.indexOf(FIRST_CHOICE_TEXT);
    if (head === -1) return undefined;
    const open = head + FIRST_CHOICE_TEXT.length - 1;
    const close = closeOfText(data, open);
    if (close === -1 || !onlyTextAround(data, head, close)) return undefined;
    this.remember(data.slice(0, open + 1), data.slice(close + 2));
    return textOf(data, open, close);
  }

  /**
   * Reads a chunk's JSON as the bytes `bytes[from, to)`, one line of them: true when it is a text
   * chunk, whose text then goes to `sink`. A chunk with the surroundings of the last text chunk
   * has its text copied as bytes, never decoded; any other is decoded and read as text, and when it
   * holds no text, `orNothing` may still take it as read (a chunk that carries nothing for its reader).
   * The text's quotes and backslashes are single bytes that no multi-byte character contains, so
   * bytes that match the surroundings around a text are a text chunk.
   */
  readBytes(bytes: Buffer, from: number, to: number, sink: PieceSink, orNothing?: (data: string) => boolean): boolean {
    if (bytes[from] !== OPEN_BRACE) return false; // not a chunk: `[DONE]`, say
    const around = this.aroundBytes ?? this.bytesOfAround();
    // equals() on a view, not compare() with offsets: compare's checks of its four offsets cost more than the view.
    if (around && to - from > around.head.length + around.tail.length && around.head.equals(bytes.subarray(from, from + around.head.length))) {
      const open = from + around.head.length - 1;
      const close = closeOfTextBytes(bytes, open, to);
      if (close !== -1 && to - around.tail.length === close + 2 && around.tail.equals(bytes.subarray(close + 2, to))) {
        return addStringPiece(bytes, open, close, sink);
      }
    }
    const data = bytes.toString('utf8', from, to);
    const text = this.read(data);
    if (text === undefined) return orNothing?.(data) === true;
    sink.add(text);
    return true;
  }

  private remember(head: string, tail: string): void {
    if (this.around?.head === head && this.around.tail === tail) return;
    this.around = { head, tail };
    this.aroundBytes = undefined;
  }

  /** The surroundings as bytes, made when first compared. */
  private bytesOfAround(): { head: Buffer; tail: Buffer } | undefined {
    const around = this.around;
    if (!around) return undefined;
    this.aroundBytes = { head: Buffer.from(around.head), tail: Buffer.from(around.tail) };
    return this.aroundBytes;
  }
}

/** The quote closing the text that opens at `open`, when the delta's object closes right after it; else -1. */
function closeOfText(data: string, open: number): number {
  const close = closingQuote(data, open);
  return data.charCodeAt(close + 1) === CLOSE_BRACE ? close : -1;
}

/** As closeOfText, on bytes up to `to`; -1 also for a text holding a raw control character, which JSON.parse refuses. */
function closeOfTextBytes(bytes: Buffer, open: number, to: number): number {
  const close = closingQuoteInBytes(bytes, open, to);
  return close !== -1 && bytes[close + 1] === CLOSE_BRACE ? close : -1;
}

// A raw control character in a JSON string: JSON.parse refuses the chunk, so the meter counts none of it.
const RAW_CONTROL = /[\u0000-\u001f]/;

/**
 * The text between its quotes, unescaped by a parse of that string alone when it holds escapes;
 * undefined when a parse would refuse it.
 */
function textOf(data: string, open: number, close: number): string | undefined {
  const text = data.slice(open + 1, close);
  if (!text.includes('\\')) return RAW_CONTROL.test(text) ? undefined : text;
  try {
    return JSON.parse(data.slice(open, close + 1)) as string;
  } catch {
    return undefined;
  }
}

/** What surrounds the text: one top-level object, holding nothing else a reader of the chunk needs. */
function onlyTextAround(data: string, head: number, close: number): boolean {
  if (data.charCodeAt(0) !== OPEN_BRACE || data.charCodeAt(data.length - 1) !== CLOSE_BRACE) return false;
  // The choices are the outer object's own, and what follows the delta closes its choice, the
  // array and that object only at the very end (a chunk cut short is parsed, and fails there).
  const stillOpen = (depth: number) => depth > 0;
  if (walkNesting(data, 1, head, 1, stillOpen) !== 1) return false;
  if (walkNesting(data, close + 2, data.length - 1, OPEN_AFTER_DELTA, stillOpen) !== 1) return false;
  const before = data.slice(0, head);
  const after = data.slice(close + 2);
  for (const key of OTHER_KEYS) if (before.includes(key) || after.includes(key)) return false;
  for (const key of NULL_KEYS) if (!nullWherever(before, key) || !nullWherever(after, key)) return false;
  return true;
}

// What may carry something for the meter: a backslash (a key may be written with escapes,
// `"\u0075sage"`), a metered key, a usage that is not null, a content that is neither empty nor
// null. One pass of a regular expression: a search per key took as long as the JSON.parse it saves.
const MAY_BE_METERED = new RegExp(`\\\\|${METERED_KEYS.join('|')}|"usage"(?!:null)|"content"(?!:""|:null)`);

/**
 * Whether a chunk carries nothing the stream's meter takes: no error, no usage (absent or null), no
 * tool calls, no reasoning, and every content empty or null. Such are the chunk that announces the
 * role and the one that gives the finish reason, which the meter would parse only to find nothing.
 */
export function carriesNothingMetered(data: string): boolean {
  return data.charCodeAt(0) === OPEN_BRACE && !MAY_BE_METERED.test(data);
}

/** Every `key` in `part` (a key with its quotes) has the value null. */
function nullWherever(part: string, key: string): boolean {
  for (let at = part.indexOf(key); at !== -1; at = part.indexOf(key, at + 1)) {
    if (!part.startsWith(':null', at + key.length)) return false;
  }
  return true;
}
