// Most events of a messages stream carry one piece of a content block: text, a tool's JSON input
// or thinking. Readers need only that piece (the meter as output delivered, the decoder as a pivot
// event), so it is read from the event's bytes, without decoding the event or parsing it into an
// object (the largest cost per event). Any other shape, or any doubt, is answered with undefined or
// false, and the event is parsed as before.
import { bytesMatchAt, CLOSE_BRACE, closingQuoteInBytes } from '../../json-text.js';
import { addStringPiece, type PieceSink } from '../stream-meter.js';

/** A content block's piece: its kind, its block's index, and its JSON string at `bytes[open, close]` (quotes included). */
export interface BlockDeltaPiece {
  kind: 'text' | 'json' | 'thinking';
  index: number;
  open: number;
  close: number;
}

// As Anthropic (and the sandbox) write a content block delta: type, index, then the delta.
const DELTA_HEAD = Buffer.from('{"type":"content_block_delta","index":');
// The delta kinds read here, each up to its string's opening quote.
const PIECE_HEADS: { kind: BlockDeltaPiece['kind']; head: Buffer }[] = [
  { kind: 'text', head: Buffer.from(',"delta":{"type":"text_delta","text":"') },
  { kind: 'json', head: Buffer.from(',"delta":{"type":"input_json_delta","partial_json":"') },
  { kind: 'thinking', head: Buffer.from(',"delta":{"type":"thinking_delta","thinking":"') },
];
const DIGIT_0 = 48;
const DIGIT_9 = 57;

/**
 * The piece of the event data `bytes[from, to)` when it is exactly
 * `{"type":"content_block_delta","index":N,"delta":{"type":"<kind>_delta","<field>":"…"}}` for text,
 * JSON input or thinking; undefined for anything else, including data that JSON.parse would refuse
 * (the string's escapes aside, which whoever reads the string checks).
 */
export function blockDeltaAt(bytes: Buffer, from: number, to: number): BlockDeltaPiece | undefined {
  if (!bytesMatchAt(bytes, from, to, DELTA_HEAD)) return undefined;
  const digits = from + DELTA_HEAD.length;
  let at = digits;
  let index = 0;
  for (; at < to && bytes[at]! >= DIGIT_0 && bytes[at]! <= DIGIT_9; at++) index = index * 10 + bytes[at]! - DIGIT_0;
  // JSON's integers: at least one digit, and no leading zero before another
  if (at === digits || (bytes[digits] === DIGIT_0 && at - digits > 1)) return undefined;
  const piece = PIECE_HEADS.find(({ head }) => bytesMatchAt(bytes, at, to, head));
  if (!piece) return undefined;
  const open = at + piece.head.length - 1;
  const close = closingQuoteInBytes(bytes, open, to);
  // The piece's string closes the delta and the event, and nothing follows.
  if (close === -1 || close + 3 !== to || bytes[close + 1] !== CLOSE_BRACE || bytes[close + 2] !== CLOSE_BRACE) return undefined;
  return { kind: piece.kind, index, open, close };
}

/** The meter's skim: a block's piece of output to `sink`; false when the event is to be parsed. */
export function skimBlockDelta(bytes: Buffer, from: number, to: number, sink: PieceSink): boolean {
  const piece = blockDeltaAt(bytes, from, to);
  return piece !== undefined && addStringPiece(bytes, piece.open, piece.close, sink);
}
