// Reading JSON text without parsing it: the bracket nesting of a stretch of it, strings skipped.
// Request bodies are checked for depth this way before a parse, and stream chunks are skimmed.

export const QUOTE = 34;
export const BACKSLASH = 92;
export const OPEN_BRACE = 123;
export const CLOSE_BRACE = 125;
const OPEN_BRACKET = 91;
const CLOSE_BRACKET = 93;

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
