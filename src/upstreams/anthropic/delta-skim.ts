// Most events of a messages stream carry one piece of a content block: text, a tool's JSON input
// or thinking. The meter needs only that piece (as output delivered), so it is read from the
// event's bytes, without decoding the event or parsing it into an object (the largest cost per
// event). Any other shape, or any doubt, is answered with false, and the event is parsed as before.
import { bytesMatchAt, CLOSE_BRACE, closingQuoteInBytes } from '../../json-text.js';
import { addStringPiece, type PieceSink } from '../stream-meter.js';

// As Anthropic (and the sandbox) write a content block delta: type, index, then the delta.
const DELTA_HEAD = Buffer.from('{"type":"content_block_delta","index":');
// The delta kinds whose piece the meter counts, each up to its string's opening quote.
const PIECE_HEADS = ['text_delta","text', 'input_json_delta","partial_json', 'thinking_delta","thinking'].map((kind) =>
  Buffer.from(`,"delta":{"type":"${kind}":"`),
);
const DIGIT_0 = 48;
const DIGIT_9 = 57;

/**
 * Reads the event data `bytes[from, to)` when it is exactly
 * `{"type":"content_block_delta","index":N,"delta":{"type":"<kind>_delta","<field>":"…"}}` for text,
 * JSON input or thinking: its piece goes to `sink` and the answer is true. False for anything else,
 * including data that JSON.parse would refuse, so that skimming never counts what parsing would not.
 */
export function skimBlockDelta(bytes: Buffer, from: number, to: number, sink: PieceSink): boolean {
  if (!bytesMatchAt(bytes, from, to, DELTA_HEAD)) return false;
  const digits = from + DELTA_HEAD.length;
  let at = digits;
  while (at < to && bytes[at]! >= DIGIT_0 && bytes[at]! <= DIGIT_9) at++;
  // JSON's integers: at least one digit, and no leading zero before another
  if (at === digits || (bytes[digits] === DIGIT_0 && at - digits > 1)) return false;
  const head = PIECE_HEADS.find((candidate) => bytesMatchAt(bytes, at, to, candidate));
  if (!head) return false;
  const open = at + head.length - 1;
  const close = closingQuoteInBytes(bytes, open, to);
  // The piece's string closes the delta and the event, and nothing follows.
  if (close === -1 || close + 3 !== to || bytes[close + 1] !== CLOSE_BRACE || bytes[close + 2] !== CLOSE_BRACE) return false;
  return addStringPiece(bytes, open, close, sink);
}
