// What the token-priced streams (chat, responses, messages) share: the output delivered so far,
// counted with the model's tokenizer, an end marker seen and an upstream error seen. Each protocol
// says in its own meter which events are which, and what usage the upstream reported.
import { OutputCounter } from '../billing/output-counter.js';
import type { TokenizerName } from '../billing/tokens.js';
import { escapedWithin } from '../json-text.js';
import type { StreamMeter } from '../pipeline/types.js';
import type { TokenUsage } from './openai-chat/usage.js';

/** Where a skimmed piece of output goes (an OutputCounter): as the UTF-8 bytes it came in, or as text. */
export interface PieceSink {
  add(text: string): void;
  addBytes(bytes: Buffer, start: number, end: number): void;
}

/** The JSON string `bytes[open, close]` (its quotes included) as text; undefined when its escapes are not JSON's. */
export function stringPiece(bytes: Buffer, open: number, close: number): string | undefined {
  return escapedWithin(bytes, open, close) ? unescapedPiece(bytes, open, close) : bytes.toString('utf8', open + 1, close);
}

/** The escaped JSON string `bytes[open, close]` parsed alone; undefined when JSON.parse refuses it. */
function unescapedPiece(bytes: Buffer, open: number, close: number): string | undefined {
  try {
    return JSON.parse(bytes.toString('utf8', open, close + 1)) as string;
  } catch {
    return undefined;
  }
}

/**
 * The JSON string `bytes[open, close]` to `sink`: its bytes as they came when it has no escapes (never
 * decoded), else parsed alone; false when its escapes are not JSON's, as the parse of
 * the whole event would refuse them too.
 */
export function addStringPiece(bytes: Buffer, open: number, close: number, sink: PieceSink): boolean {
  if (!escapedWithin(bytes, open, close)) {
    sink.addBytes(bytes, open + 1, close);
    return true;
  }
  const text = unescapedPiece(bytes, open, close);
  if (text !== undefined) sink.add(text);
  return text !== undefined;
}

export abstract class TokenStreamMeter implements StreamMeter {
  /** The upstream reported an error in the stream. */
  failed = false;
  /** The protocol's end marker arrived. */
  protected ended = false;
  readonly output: OutputCounter;

  constructor(tokenizer: TokenizerName) {
    this.output = new OutputCounter(tokenizer);
  }

  get completed(): boolean {
    return this.ended && !this.failed;
  }

  abstract reported(): TokenUsage | undefined;

  delivered(): { output_token: number } {
    return { output_token: this.output.tokens() };
  }
}
