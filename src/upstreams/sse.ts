// Server-sent events on the side of a pass-through: frames the byte stream into events, lets a
// reader look at each one (for usage) and decide whether it goes on to the client unchanged.

import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
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

/**
 * Where the first event in `text` from `from` ends: the blank line that closes it (`\r?\n\r?\n`,
 * the first such), or undefined. Found by its first newline, which is faster than a regular expression.
 */
export function findEventEnd(text: string, from: number): { at: number; length: number } | undefined {
  for (let newline = text.indexOf('\n', from); newline !== -1; newline = text.indexOf('\n', newline + 1)) {
    const next = text.charCodeAt(newline + 1);
    const closes = next === LF ? 2 : next === CR && text.charCodeAt(newline + 2) === LF ? 3 : 0;
    if (closes === 0) continue;
    const at = newline > from && text.charCodeAt(newline - 1) === CR ? newline - 1 : newline;
    return { at, length: newline + closes - at };
  }
  return undefined;
}

/** Cuts decoded text into raw events (each with its closing blank line); never holds more than one partial event. */
export class SseFramer {
  private readonly decoder = new StringDecoder('utf8');
  private pending = '';
  /** The last chunk ended in a byte that may leave part of a character in the decoder. */
  private mayHoldPartialCharacter = false;

  push(chunk: Buffer): { raw: string; separator: string }[] {
    this.pending += this.decoder.write(chunk);
    this.mayHoldPartialCharacter = chunk.length > 0 && chunk[chunk.length - 1]! >= 0x80;
    return this.cut();
  }

  /** Nothing of an event is held: the bytes pushed so far ended exactly where an event did. */
  get holdsNothing(): boolean {
    return this.pending === '' && !this.mayHoldPartialCharacter;
  }

  end(): { raw: string; separator: string }[] {
    this.pending += this.decoder.end();
    // An upstream that ends without the final blank line still delivers its last event.
    if (this.pending.trim().length > 0) this.pending += '\n\n';
    return this.cut();
  }

  private cut() {
    const events: { raw: string; separator: string }[] = [];
    let start = 0;
    for (let end = findEventEnd(this.pending, start); end; end = findEventEnd(this.pending, start)) {
      if (end.at > start) events.push({ raw: this.pending.slice(start, end.at), separator: this.pending.slice(end.at, end.at + end.length) });
      start = end.at + end.length;
    }
    if (start > 0) this.pending = this.pending.slice(start);
    return events;
  }
}

/**
 * A tap that forwards each complete event as soon as its closing blank line arrives:
 * never a timer, never more than one partial event held.
 */
export function createSseTap(read: SseReader, rewrite?: (raw: string) => string): PassThroughTap {
  const framer = new SseFramer();
  return new PassThroughTap((chunk, eventRead) => {
    const startsAnEvent = chunk !== undefined && framer.holdsNothing;
    let out = '';
    let unchanged = true;
    for (const { raw, separator } of chunk ? framer.push(chunk) : framer.end()) {
      const written = read(parseSseEvent(raw)) === false ? '' : rewrite ? rewrite(raw) : raw;
      // Cut at the end marker: the tap's lengths count this text, not the chunk's bytes.
      if (eventRead(out.length)) unchanged = false;
      if (written !== raw) unchanged = false;
      if (written !== '') out += written + separator;
    }
    // A chunk of whole events that all go on as they came goes on as its own bytes: the same
    // bytes as the text would give, without encoding that text again (most chunks of a stream).
    if (startsAnEvent && unchanged && framer.holdsNothing) return chunk;
    return out.length > 0 ? out : undefined;
  });
}

/**
 * An upstream's SSE body passed through, each JSON event shown to `observe` on the way (for
 * usage); `observe` may answer false to hold an event back. Malformed data is passed on as it came.
 */
export function observeSseJson<Event>(
  body: Readable,
  // Each event as the upstream's protocol shapes it; `observe` reads it defensively (an upstream may not).
  observe: (value: Event) => boolean | undefined,
  options: { modelAlias?: ModelAlias; onDone?: () => void; skim?: SseSkimmer } = {},
): Readable {
  const tap = createSseTap(({ data }) => {
    // `[DONE]`: the chat completions stream's end marker.
    if (data === '[DONE]') options.onDone?.();
    if (!data.startsWith('{')) return;
    if (options.skim?.(data)) return;
    let value: unknown;
    try {
      value = JSON.parse(data);
    } catch {
      return;
    }
    return observe(value as Event);
  }, renameModel(options.modelAlias));
  // An upstream that breaks fails the tap, and a caller that leaves stops the upstream.
  return feedTap(body, tap);
}

/**
 * Reads an event's JSON text without parsing it, when its shape is one it knows: true when it
 * has seen all `observe` would have (the event then passes on unchanged), false to parse it.
 */
export type SseSkimmer = (data: string) => boolean;

/** The channel's model id and the public one the caller asked for. */
export interface ModelAlias {
  upstream: string;
  public: string;
}

/**
 * Streams carry the upstream's model id; the caller sees the public one, as in plain answers.
 * Only when the two differ, and only the `"model":"…"` field, so other bytes pass untouched.
 */
function renameModel(alias: ModelAlias | undefined): ((raw: string) => string) | undefined {
  if (!alias || alias.upstream === alias.public) return undefined;
  const needle = `"model":${JSON.stringify(alias.upstream)}`;
  const replacement = `"model":${JSON.stringify(alias.public)}`;
  return (raw) => (raw.includes(needle) ? raw.replaceAll(needle, replacement) : raw);
}
