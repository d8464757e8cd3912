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

/** Cuts decoded text into raw events (each with its closing blank line); never holds more than one partial event. */
export class SseFramer {
  private readonly decoder = new StringDecoder('utf8');
  private pending = '';

  push(chunk: Buffer): { raw: string; separator: string }[] {
    this.pending += this.decoder.write(chunk);
    return this.cut();
  }

  end(): { raw: string; separator: string }[] {
    this.pending += this.decoder.end();
    // An upstream that ends without the final blank line still delivers its last event.
    if (this.pending.trim().length > 0) this.pending += '\n\n';
    return this.cut();
  }

  private cut() {
    const events: { raw: string; separator: string }[] = [];
    let match: RegExpExecArray | null;
    while ((match = EVENT_END.exec(this.pending))) {
      const raw = this.pending.slice(0, match.index);
      this.pending = this.pending.slice(match.index + match[0].length);
      if (raw.length > 0) events.push({ raw, separator: match[0] });
    }
    return events;
  }
}

/**
 * A tap that forwards each complete event as soon as its closing blank line arrives:
 * never a timer, never more than one partial event held.
 */
export function createSseTap(read: SseReader, rewrite?: (raw: string) => string): PassThroughTap {
  const framer = new SseFramer();
  return new PassThroughTap((chunk) => {
    let out = '';
    for (const { raw, separator } of chunk ? framer.push(chunk) : framer.end()) {
      if (read(parseSseEvent(raw)) !== false) out += (rewrite ? rewrite(raw) : raw) + separator;
    }
    return out.length > 0 ? out : undefined;
  });
}

/**
 * An upstream's SSE body passed through, each JSON event shown to `observe` on the way (for
 * usage); `observe` may answer false to hold an event back. Malformed data is passed on as it came.
 */
export function observeSseJson(
  body: Readable,
  observe: (value: any) => boolean | undefined,
  options: { modelAlias?: ModelAlias; onDone?: () => void } = {},
): Readable {
  const tap = createSseTap(({ data }) => {
    // `[DONE]`: the chat completions stream's end marker.
    if (data === '[DONE]') options.onDone?.();
    if (!data.startsWith('{')) return;
    let value: unknown;
    try {
      value = JSON.parse(data);
    } catch {
      return;
    }
    return observe(value);
  }, renameModel(options.modelAlias));
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
function renameModel(alias: ModelAlias | undefined): ((raw: string) => string) | undefined {
  if (!alias || alias.upstream === alias.public) return undefined;
  const needle = `"model":${JSON.stringify(alias.upstream)}`;
  const replacement = `"model":${JSON.stringify(alias.public)}`;
  return (raw) => (raw.includes(needle) ? raw.replaceAll(needle, replacement) : raw);
}
