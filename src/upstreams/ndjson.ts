// Newline-delimited JSON on the side of a pass-through: each complete line is shown to an
// observer (for usage), then passed on as it came. Never more than one partial line is held.
// The bytes go on as the upstream's own Buffers, cut after a line's end: a line is decoded only to
// be read, never decoded and encoded again on its way out. (A newline byte is never part of a
// multi-byte UTF-8 character, so a cut there never splits one.)

import type { Readable } from 'node:stream';
import { parseJsonObject } from '../json-text.js';
import { feedTap, PassThroughTap } from './tap.js';

/** Called for every parsed line; throw to fail the stream (an upstream error object, say). */
export type NdjsonObserver<Line> = (value: Line) => void;

/**
 * Reads a line (`bytes[start, end)`) without decoding or parsing it, when its shape is one it knows:
 * true when it has seen all the observer would have, false to parse the line as usual.
 */
export type NdjsonSkimmer = (bytes: Buffer, start: number, end: number) => boolean;

const NEWLINE = 0x0a;

export function observeNdjson<Line>(body: Readable, observe: NdjsonObserver<Line>, skim?: NdjsonSkimmer): Readable {
  const look = (line: string) => {
    // Some clients prefix lines with `data:`; the upstream documents plain lines.
    const value = parseJsonObject(line.replace(/^data:\s*/, '').trim());
    if (value !== undefined) observe(value as Line);
  };
  const cutter = new LineCutter();
  const tap = new PassThroughTap((chunk, eventRead) => {
    const lines = cutter.cut(chunk);
    // Lengths in bytes: the output is these very bytes.
    if (lines)
      forEachLine(lines, (start, end) => {
        if (!skim?.(lines, start, end)) look(lines.toString('utf8', start, end));
        eventRead(start);
      });
    return lines;
  });
  return feedTap(body, tap);
}

/** Cuts a byte stream after its newlines, holding back never more than one partial line (copied out of its chunk). */
export class LineCutter {
  private pending: Buffer | undefined;

  /**
   * The whole lines that `chunk` completes, newlines included, as the stream's own bytes; at the end
   * (no chunk), the last line even without its newline. Undefined: nothing yet.
   */
  cut(chunk: Buffer | undefined): Buffer | undefined {
    if (!chunk) {
      const rest = this.pending;
      this.pending = undefined;
      return rest;
    }
    const bytes = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
    const end = bytes.lastIndexOf(NEWLINE) + 1;
    this.pending = end < bytes.length ? Buffer.from(bytes.subarray(end)) : undefined;
    if (end === 0) return undefined;
    return end === bytes.length ? bytes : bytes.subarray(0, end);
  }
}

/** Calls `visit` with the bounds of each line of `lines` that is not empty, its newline left out. */
export function forEachLine(lines: Buffer, visit: (start: number, end: number) => void): void {
  for (let start = 0; start < lines.length; ) {
    const newline = lines.indexOf(NEWLINE, start);
    const end = newline === -1 ? lines.length : newline;
    if (end > start) visit(start, end);
    start = end + 1;
  }
}
