// Server-sent events on the side of a pass-through: frames the byte stream into events, lets a
// reader look at each one (for usage) and decide whether it goes on to the client unchanged.

import type { Readable } from 'node:stream';
import { bytesMatchAt, parseJsonObject } from '../json-text.js';
import { feedTap, PassThroughTap } from './tap.js';

export interface SseEvent {
  event: string | undefined;
  data: string;
}

/** Called for every complete event; answer false to keep it from the client. */
export type SseReader = (event: SseEvent) => boolean | undefined;

export function parseSseEvent(raw: string): SseEvent {
  let event: string | undefined;
  let data: string | undefined;
  // Line by line with indexOf, not split(/\r?\n/): this runs for every event of every stream.
  for (let start = 0; start <= raw.length; ) {
    const newline = raw.indexOf('\n', start);
    const end = newline === -1 ? raw.length : newline;
    const lineEnd = newline !== -1 && end > start && raw.charCodeAt(end - 1) === CR ? end - 1 : end;
    if (raw.startsWith('data:', start)) {
      const value = raw.slice(start + (raw.charCodeAt(start + 5) === SPACE ? 6 : 5), lineEnd);
      data = data === undefined ? value : `${data}\n${value}`;
    } else if (raw.startsWith('event:', start)) {
      event = raw.slice(start + 6, lineEnd).trim();
    }
    start = end + 1;
  }
  return { event, data: data ?? '' };
}

const LF = 10;
const CR = 13;
const SPACE = 32;
const TAB = 9;

/** What findEventEnd saw of an event's newlines before its blank line. */
export interface EventLines {
  /** The first newline from the event's start: its closing one when the event is a single line. */
  firstNewline: number;
  /** How many lines the event holds: the newlines seen, its closing one included. */
  lines: number;
}

/**
 * Where the first event in `bytes` from `from` ends: the start of the blank line that closes it
 * (`\r?\n\r?\n`, the first such), or -1. Found by its first newline, which is faster than a
 * regular expression. Notes in `seen` the event's first newline and its count of lines, so that
 * dataLine needs no second search.
 */
export function findEventEnd(bytes: Buffer, from: number, seen: EventLines): number {
  seen.firstNewline = -1;
  seen.lines = 0;
  for (let newline = bytes.indexOf(LF, from); newline !== -1; newline = bytes.indexOf(LF, newline + 1)) {
    if (seen.firstNewline === -1) seen.firstNewline = newline;
    seen.lines++;
    const next = bytes[newline + 1];
    if (next !== LF && !(next === CR && bytes[newline + 2] === LF)) continue;
    return newline > from && bytes[newline - 1] === CR ? newline - 1 : newline;
  }
  return -1;
}

/** The length of the blank line (`\r?\n\r?\n`) that findEventEnd found at `at`. */
export function blankLineLength(bytes: Buffer, at: number): number {
  const first = bytes[at] === CR ? 2 : 1;
  return first + (bytes[at + first] === CR ? 2 : 1);
}

const EMPTY = Buffer.alloc(0);
const BLANK_LINE = Buffer.from('\n\n');

/**
 * Cuts a byte stream into events, in place: `load` a chunk, then each `next()` moves to its next
 * complete event, whose bytes are `bytes[start, end)` and its closing blank line `[end, close)`.
 * Cut on bytes (a newline byte is never part of a character), so an event's offsets are those of
 * the bytes to forward, and its text is decoded only when read, event by event: a chunk is never
 * decoded whole, so no text of it outlives the events read from it. At most one partial event is
 * held between chunks.
 */
export class SseFramer {
  /** The bytes being cut: the chunk loaded, after the partial event the last one left. */
  bytes: Buffer = EMPTY;
  /** The current event: `bytes[start, end)`, closed by the blank line up to `close`. */
  start = 0;
  end = 0;
  close = 0;
  /** Where the next event begins: once `next()` answers false, the start of the partial event held. */
  private at = 0;
  /** The current event's first newline and count of lines. */
  private readonly seen: EventLines = { firstNewline: -1, lines: 0 };

  /** The next chunk; undefined when the body ended (a last event without its closing blank line is still an event). */
  load(chunk: Buffer | undefined): void {
    // What the last chunk left of a partial event goes first (the usual chunk leaves none).
    const rest = this.at < this.bytes.length ? this.bytes.subarray(this.at) : EMPTY;
    if (chunk) this.bytes = rest === EMPTY ? chunk : Buffer.concat([rest, chunk]);
    else this.bytes = holdsText(rest) ? Buffer.concat([rest, BLANK_LINE]) : EMPTY;
    this.at = 0;
  }

  /** Moves to the next complete event (blank ones skipped); false when none is left. */
  next(): boolean {
    for (let found = findEventEnd(this.bytes, this.at, this.seen); found !== -1; found = findEventEnd(this.bytes, this.at, this.seen)) {
      this.start = this.at;
      this.end = found;
      this.close = found + blankLineLength(this.bytes, found);
      this.at = this.close;
      if (this.end > this.start) return true;
    }
    return false;
  }

  /** The current event's text. */
  raw(): string {
    return this.bytes.toString('utf8', this.start, this.end);
  }

  /**
   * Where the current event's data begins, when the event is one `data:` line, after at most an
   * `event:` line (its data then ends at `end`); -1 otherwise. The event's name is not read: a
   * skimming reader (observeSseJson) reads the data alone, as Anthropic's streams name every event.
   */
  dataLine(): number {
    const { bytes, end, seen } = this;
    let start = this.start;
    // The lines were counted when the event was found: one, or two when the first names the event.
    const named = bytesMatchAt(bytes, start, end, EVENT_FIELD);
    if (seen.lines !== (named ? 2 : 1)) return -1;
    if (named) start = seen.firstNewline + 1;
    if (!bytesMatchAt(bytes, start, end, DATA_FIELD)) return -1;
    return bytes[start + DATA_FIELD.length] === SPACE ? start + DATA_FIELD.length + 1 : start + DATA_FIELD.length;
  }

  /** How far the complete events go: the bytes after it (a partial event) are held for the next chunk. */
  get framed(): number {
    return this.at;
  }
}

const DATA_FIELD = Buffer.from('data:');
const EVENT_FIELD = Buffer.from('event:');

/** Any byte other than whitespace: what a partial event must hold to be delivered at the end. */
function holdsText(bytes: Buffer): boolean {
  for (const byte of bytes) if (byte !== LF && byte !== CR && byte !== SPACE && byte !== TAB) return true;
  return false;
}

/**
 * A tap that forwards each complete event as soon as its closing blank line arrives: never a
 * timer, never more than one partial event held. Events that go on as they came go on as their
 * own bytes (a chunk of them as the very Buffer that came); only an event the reader keeps back
 * or the model rename changes is written anew. An event `skim` reads from its bytes (one `data:`
 * line, after at most an `event:` line, that the rename leaves alone) is never decoded. The tap's
 * lengths count bytes.
 */
export function createSseTap(read: SseReader, options: { rename?: ModelAlias; skim?: SseDataSkimmer } = {}): PassThroughTap {
  const framer = new SseFramer();
  const rename = options.rename && options.rename.upstream !== options.rename.public ? new ModelRename(options.rename) : undefined;
  const { skim } = options;
  return new PassThroughTap((chunk, eventRead) => {
    framer.load(chunk);
    const { bytes } = framer;
    /** The output so far, once an event changed: the bytes before it, then new text. */
    let pieces: Buffer[] | undefined;
    let piecesLength = 0;
    const keep = (piece: Buffer) => {
      pieces!.push(piece);
      piecesLength += piece.length;
    };
    /** New text not yet encoded: the changed events since the last bytes kept, encoded at once. */
    let text = '';
    /** Where the bytes not yet in `pieces` begin. */
    let keptFrom = 0;
    // Measured only where the tap cuts: measuring each changed event would copy it.
    const changedOutputBefore = () => piecesLength + Buffer.byteLength(text) + (framer.start - keptFrom);
    while (framer.next()) {
      const renamed = rename?.within(bytes, framer.start, framer.end) === true;
      if (!renamed && skim && skimmed(framer, skim)) {
        eventRead(pieces ? changedOutputBefore : framer.start);
        continue;
      }
      const raw = framer.raw();
      const written = read(parseSseEvent(raw)) === false ? '' : renamed ? rename!.apply(raw) : raw;
      eventRead(pieces ? changedOutputBefore : framer.start);
      if (written === raw) continue;
      pieces ??= [];
      if (keptFrom < framer.start) {
        if (text !== '') keep(Buffer.from(text));
        text = '';
        keep(bytes.subarray(keptFrom, framer.start));
      }
      if (written !== '') text += written + separatorOf(bytes, framer.end, framer.close);
      keptFrom = framer.close;
    }
    const framed = framer.framed;
    if (pieces) {
      if (text !== '') pieces.push(Buffer.from(text));
      pieces.push(bytes.subarray(keptFrom, framed));
      const out = Buffer.concat(pieces);
      return out.length > 0 ? out : undefined;
    }
    if (framed === 0) return undefined;
    return framed === bytes.length ? bytes : bytes.subarray(0, framed);
  });
}

/** Whether `skim` read the current event from its bytes: a single `data:` line, named or not. */
function skimmed(framer: SseFramer, skim: SseDataSkimmer): boolean {
  const data = framer.dataLine();
  return data !== -1 && skim(framer.bytes, data, framer.end);
}

const separatorOf = (bytes: Buffer, end: number, close: number) => (close - end === 2 ? '\n\n' : bytes.toString('latin1', end, close));

/**
 * Reads an event's data (`bytes[start, end)`, one line) without decoding or
 * parsing it, when its shape is one it knows: true when it has seen all the reader would have (the
 * event then goes on unchanged), false to read the event as usual.
 */
export type SseDataSkimmer = (bytes: Buffer, start: number, end: number) => boolean;

/**
 * An upstream's SSE body passed through, each JSON event shown to `observe` on the way (for
 * usage); `observe` may answer false to hold an event back. Malformed data is passed on as it came.
 */
export function observeSseJson<Event>(
  body: Readable,
  // Each event as the upstream's protocol shapes it; `observe` reads it defensively (an upstream may not).
  observe: (value: Event) => boolean | undefined,
  options: { modelAlias?: ModelAlias; onDone?: () => void; skim?: SseDataSkimmer } = {},
): Readable {
  const tap = createSseTap(
    ({ data }) => {
      // `[DONE]`: the chat completions stream's end marker.
      if (data === '[DONE]') options.onDone?.();
      const value = parseJsonObject(data);
      return value === undefined ? undefined : observe(value as Event);
    },
    { rename: options.modelAlias, skim: options.skim },
  );
  // An upstream that breaks fails the tap, and a caller that leaves stops the upstream.
  return feedTap(body, tap);
}

/** The channel's model id and the public one the caller asked for. */
export interface ModelAlias {
  upstream: string;
  public: string;
}

/**
 * Streams carry the upstream's model id; the caller sees the public one, as in plain answers.
 * Only when the two differ, and only the `"model":"…"` field, so other bytes pass untouched.
 */
class ModelRename {
  private readonly needle: string;
  private readonly replacement: string;
  private readonly needleBytes: Buffer;
  /** The bytes last searched, from where, and where the needle next occurs in them (their length: nowhere). */
  private searched: Buffer | undefined;
  private searchedFrom = 0;
  private nextAt = 0;

  constructor(alias: ModelAlias) {
    this.needle = `"model":${JSON.stringify(alias.upstream)}`;
    this.replacement = `"model":${JSON.stringify(alias.public)}`;
    this.needleBytes = Buffer.from(this.needle);
  }

  /** Whether the event `bytes[start, end)` holds the needle; events are asked in order, so each byte is searched once. */
  within(bytes: Buffer, start: number, end: number): boolean {
    if (bytes !== this.searched || start < this.searchedFrom || this.nextAt < start) {
      const found = bytes.indexOf(this.needleBytes, start);
      this.searched = bytes;
      this.searchedFrom = start;
      this.nextAt = found === -1 ? bytes.length : found;
    }
    return this.nextAt < end;
  }

  apply(raw: string): string {
    return raw.replaceAll(this.needle, this.replacement);
  }
}
