// Server-sent events on the side of a pass-through: frames the byte stream into events, lets a
// reader look at each one (for usage) and decide whether it goes on to the client unchanged.
import { StringDecoder } from 'node:string_decoder';
import { Transform, type TransformCallback } from 'node:stream';

export interface SseEvent {
  event: string | undefined;
  data: string;
}

/** Called for every complete event; answer false to keep it from the client. */
export type SseReader = (event: SseEvent) => boolean | void;

const EVENT_END = /\r?\n\r?\n/;

export function parseSseEvent(raw: string): SseEvent {
  let event: string | undefined;
  const data: string[] = [];
  for (const line of raw.split(/\r?\n/)) {
    if (line.startsWith('data:')) data.push(line.slice(line.charAt(5) === ' ' ? 6 : 5));
    else if (line.startsWith('event:')) event = line.slice(6).trim();
  }
  return { event, data: data.join('\n') };
}

/**
 * A Transform that forwards each complete event as soon as its closing blank line arrives:
 * never a timer, never more than one partial event held.
 */
export function createSseTap(read: SseReader): Transform {
  const decoder = new StringDecoder('utf8');
  let pending = '';
  const flushEvents = (push: (text: string) => void) => {
    let match: RegExpExecArray | null;
    while ((match = EVENT_END.exec(pending))) {
      const raw = pending.slice(0, match.index);
      const sep = match[0];
      pending = pending.slice(match.index + sep.length);
      if (raw.length === 0) continue;
      if (read(parseSseEvent(raw)) !== false) push(raw + sep);
    }
  };
  return new Transform({
    transform(chunk: Buffer, _encoding, callback: TransformCallback) {
      pending += decoder.write(chunk);
      let out = '';
      flushEvents((text) => (out += text));
      callback(null, out.length > 0 ? out : undefined);
    },
    flush(callback: TransformCallback) {
      pending += decoder.end();
      // An upstream that ends without the final blank line still delivers its last event.
      if (pending.trim().length > 0) pending += '\n\n';
      let out = '';
      flushEvents((text) => (out += text));
      callback(null, out.length > 0 ? out : undefined);
    },
  });
}
