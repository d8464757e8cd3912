// Newline-delimited JSON on the side of a pass-through: each complete line is shown to an
// observer (for usage), then passed on as it came. Never more than one partial line is held.

import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { feedTap, PassThroughTap } from './tap.js';

/** Called for every parsed line; throw to fail the stream (an upstream error object, say). */
export type NdjsonObserver = (value: any) => void;

export function observeNdjson(body: Readable, observe: NdjsonObserver): Readable {
  const decoder = new StringDecoder('utf8');
  let pending = '';
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
  const take = (text: string, final: boolean): string => {
    pending += text;
    const end = final ? pending.length : pending.lastIndexOf('\n') + 1;
    if (end === 0) return '';
    const complete = pending.slice(0, end);
    pending = pending.slice(end);
    for (const line of complete.split('\n')) look(line);
    return complete;
  };
  const tap = new PassThroughTap((chunk) => {
    const out = chunk ? take(decoder.write(chunk), false) : take(decoder.end(), true);
    return out.length > 0 ? out : undefined;
  });
  return feedTap(body, tap);
}
