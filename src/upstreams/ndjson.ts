// Newline-delimited JSON on the side of a pass-through: each complete line is shown to an
// observer (for usage), then passed on as it came. Never more than one partial line is held.
// The bytes go on as the upstream's own Buffers, cut after a line's end: a line is decoded only to
// be read, never decoded and encoded again on its way out. (A newline byte is never part of a
// multi-byte UTF-8 character, so a cut there never splits one.)

import type { Readable } from 'node:stream';
import { type EventRead, feedTap, PassThroughTap } from './tap.js';

/** Called for every parsed line; throw to fail the stream (an upstream error object, say). */
export type NdjsonObserver = (value: any) => void;

/**
 * Reads a line (`bytes[start, end)`) without decoding or parsing it, when its shape is one it knows:
 * true when it has seen all the observer would have, false to parse the line as usual.
 */
export type NdjsonSkimmer = (bytes: Buffer, start: number, end: number) => boolean;

const NEWLINE = 0x0a;

export function observeNdjson(body: Readable, observe: NdjsonObserver, skim?: NdjsonSkimmer): Readable {
  /** The partial line after the last newline so far, copied out of its chunk. */
  let pending: Buffer | undefined;
  const look = (line: string) => {
    // Some clients prefix lines with `data:`; the upstream documents plain lines.
    const text = line.replace(/^data:\s*/, '').trim();
    if (!text.startsWith('{')) return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return;
    }
    observe(value);
  };
  // Lengths in bytes: the output is these very bytes.
  const lookAll = (lines: Buffer, eventRead: EventRead) => {
    for (let start = 0; start < lines.length; ) {
      const newline = lines.indexOf(NEWLINE, start);
      const end = newline === -1 ? lines.length : newline;
      if (end > start) {
        if (!skim?.(lines, start, end)) look(lines.toString('utf8', start, end));
        eventRead(start);
      }
      start = end + 1;
    }
  };
  const tap = new PassThroughTap((chunk, eventRead) => {
    if (!chunk) {
      // The end: the last line, even without its newline.
      const rest = pending;
      pending = undefined;
      if (rest) lookAll(rest, eventRead);
      return rest;
    }
    const bytes = pending ? Buffer.concat([pending, chunk]) : chunk;
    const end = bytes.lastIndexOf(NEWLINE) + 1;
    pending = end < bytes.length ? Buffer.from(bytes.subarray(end)) : undefined;
    if (end === 0) return undefined;
    const complete = end === bytes.length ? bytes : bytes.subarray(0, end);
    lookAll(complete, eventRead);
    return complete;
  });
  return feedTap(body, tap);
}
