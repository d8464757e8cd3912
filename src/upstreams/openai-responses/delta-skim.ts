// Most events of a Responses stream carry one piece of output: text, or a function call's
// arguments. The meter needs only that piece, so it is read from the event's bytes, without
// decoding the event or parsing it into an object. The event is a flat object whose other fields
// (a sequence number, ids, indexes, empty logprobs) come in an order that varies between servers,
// so its members are walked one by one; anything nested, escaped or unexpected answers false, and
// the event is parsed as before.
import { bytesMatchAt, CLOSE_BRACE, CLOSE_BRACKET, closingQuoteInBytes, escapedWithin, OPEN_BRACKET, QUOTE } from '../../json-text.js';
import { addStringPiece, type PieceSink } from '../stream-meter.js';

// The event types whose `delta` the meter counts, written first as OpenAI and the sandbox write them.
const HEADS = ['response.output_text.delta', 'response.function_call_arguments.delta'].map((type) => Buffer.from(`{"type":"${type}",`));
const DELTA_KEY = Buffer.from('"delta"');
const TYPE_KEY = Buffer.from('"type"');
const COLON = 58;
const COMMA = 44;
const DIGIT_0 = 48;
const DIGIT_9 = 57;
/** A number, true, false or null, as JSON writes them. */
const LITERAL = /^(?:-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)$/;

/**
 * Reads the event data `bytes[from, to)` when it is a flat object, written without spaces, of an
 * output text or function call arguments delta whose `delta` is a string: the string goes to `sink`
 * and the answer is true. False for anything else, including data that JSON.parse would refuse or
 * read otherwise (a second `type` or `delta`), so that skimming never counts what parsing would not.
 */
export function skimOutputDelta(bytes: Buffer, from: number, to: number, sink: PieceSink): boolean {
  const head = HEADS.find((candidate) => bytesMatchAt(bytes, from, to, candidate));
  if (!head) return false;
  let piece = -1;
  let pieceClose = -1;
  for (let at = from + head.length; ; ) {
    // A key, written plainly: no escape could make it read as another.
    const keyClose = closingQuoteInBytes(bytes, at, to);
    if (bytes[at] !== QUOTE || keyClose === -1 || escapedWithin(bytes, at, keyClose) || bytes[keyClose + 1] !== COLON) return false;
    const isDelta = keyClose - at + 1 === DELTA_KEY.length && bytesMatchAt(bytes, at, to, DELTA_KEY);
    if (keyClose - at + 1 === TYPE_KEY.length && bytesMatchAt(bytes, at, to, TYPE_KEY)) return false;
    const value = keyClose + 2;
    let after: number;
    if (bytes[value] === QUOTE) {
      const close = closingQuoteInBytes(bytes, value, to);
      if (close === -1) return false;
      if (isDelta) {
        if (piece !== -1) return false;
        piece = value;
        pieceClose = close;
      } else if (escapedWithin(bytes, value, close)) return false; // its escapes are not checked here
      after = close + 1;
    } else if (isDelta)
      return false; // not a string: what the meter makes of it is the parse's
    else if (bytes[value] === OPEN_BRACKET && bytes[value + 1] === CLOSE_BRACKET) after = value + 2;
    else {
      after = value;
      while (after < to && bytes[after] !== COMMA && bytes[after] !== CLOSE_BRACE) after++;
      if (!isLiteral(bytes, value, after)) return false;
    }
    if (bytes[after] === CLOSE_BRACE) {
      if (after + 1 !== to || piece === -1) return false;
      return addStringPiece(bytes, piece, pieceClose, sink);
    }
    if (bytes[after] !== COMMA) return false;
    at = after + 1;
  }
}

/** Whether `bytes[from, to)` is a JSON number, true, false or null: the usual unsigned integer read here, anything else decoded and matched. */
function isLiteral(bytes: Buffer, from: number, to: number): boolean {
  if (to === from) return false;
  let digits = true;
  for (let i = from; i < to && digits; i++) digits = bytes[i]! >= DIGIT_0 && bytes[i]! <= DIGIT_9;
  if (digits) return to - from === 1 || bytes[from] !== DIGIT_0;
  return LITERAL.test(bytes.toString('latin1', from, to));
}
