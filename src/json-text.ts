// Reading JSON text without parsing it: the bracket nesting of a stretch of it, strings skipped.
// Request bodies are checked for depth this way before a parse, and stream chunks are skimmed.

export const QUOTE = 34;
export const BACKSLASH = 92;
export const OPEN_BRACE = 123;
export const CLOSE_BRACE = 125;
export const OPEN_BRACKET = 91;
export const CLOSE_BRACKET = 93;

/** The index of the quote that closes the string opening at `open`, or `end` when none does before it. */
export function closingQuote(text: string, open: number, end = text.length): number {
  let i = open + 1;
  for (; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) break;
    if (c === BACKSLASH) i++; // skip the escaped character
  }
  return Math.min(i, end);
}

/** Whether `bytes` hold `expected` at `at`, before `to`. Byte by byte: a call to Buffer's compare costs more than these few reads. */
export function bytesMatchAt(bytes: Buffer, at: number, to: number, expected: Buffer): boolean {
  if (at + expected.length > to) return false;
  for (let i = 0; i < expected.length; i++) if (bytes[at + i] !== expected[i]) return false;
  return true;
}

/** Below it, a byte in a JSON string is a raw control character, which JSON.parse refuses. */
const FIRST_PRINTABLE = 32;

/**
 * The index of the quote that closes the JSON string opening at `bytes[open]`, before `to`; -1 when
 * none does, or when the string holds a raw control character (JSON.parse would refuse it).
 */
export function closingQuoteInBytes(bytes: Buffer, open: number, to: number): number {
  for (let i = open + 1; i < to; i++) {
    const byte = bytes[i]!;
    if (byte === QUOTE) return i;
    if (byte < FIRST_PRINTABLE) return -1;
    if (byte === BACKSLASH) i++; // the escaped character
  }
  return -1;
}

/**
 * Whether a backslash comes between `open` and `close`. A loop over the string's own bytes, not
 * Buffer's indexOf, which would search on to the end of the chunk when there is none.
 */
export function escapedWithin(bytes: Buffer, open: number, close: number): boolean {
  for (let i = open + 1; i < close; i++) if (bytes[i] === BACKSLASH) return true;
  return false;
}

/**
 * Walks the nesting of objects and arrays along `text` from `from` to `to`, starting at `depth`:
 * `onDepth` hears the depth after each bracket and may answer false to stop the walk. The depth at
 * `to`, or undefined when stopped.
 */
export function walkNesting(text: string, from: number, to: number, depth: number, onDepth: (depth: number) => boolean): number | undefined {
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) i = closingQuote(text, i, to);
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (!onDepth(++depth)) return undefined;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      if (!onDepth(--depth)) return undefined;
    }
  }
  return depth;
}

/**
 * `text`, a JSON object, with its top-level `key` set from the string `from` to the string `to`,
 * changed in place: the rest of the text stays byte for byte as it was. Undefined when that cannot
 * be done safely (the key written otherwise, with spaces or escapes; written more than once; or not
 * at the top level), and the caller then builds the object instead.
 */
export function withTopLevelString(text: string, key: string, from: string, to: string): string | undefined {
  const field = `${JSON.stringify(key)}:`;
  const at = text.indexOf(field);
  if (at === -1 || text.indexOf(field, at + 1) !== -1) return undefined;
  const value = JSON.stringify(from);
  if (!text.startsWith(value, at + field.length)) return undefined;
  if (text.charCodeAt(0) !== OPEN_BRACE || walkNesting(text, 0, at, 0, () => true) !== 1) return undefined;
  return `${text.slice(0, at + field.length)}${JSON.stringify(to)}${text.slice(at + field.length + value.length)}`;
}

/**
 * `text` parsed, when it is the text of a JSON object; undefined when it is not one, or is
 * malformed (a stream passes such data on as it came, and reads nothing from it).
 */
export function parseJsonObject(text: string): unknown {
  if (!text.startsWith('{')) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A JSON body already written as text (an upstream's answer passed on): sent as it is, never serialized again. */
export class JsonText {
  constructor(readonly text: string) {}
}

/** A JSON body as the bytes of its answer: its text when it has one, else what JSON.stringify writes. */
export const jsonBodyText = (body: unknown): string => (body instanceof JsonText ? body.text : JSON.stringify(body));
