// The part every SSE-speaking kind's stream decoder shares: frame the body into events and read each
// event's JSON data; the kind says what an event means in pivot events.

import { parseJsonObject } from '../json-text.js';
import type { PivotEvent, PivotStreamDecoder } from '../pivot/types.js';
import { parseSseEvent, SseFramer } from './sse.js';

export abstract class SseJsonDecoder<Event> implements PivotStreamDecoder {
  private readonly framer = new SseFramer();

  push(chunk: Buffer): PivotEvent[] {
    return this.read(chunk);
  }

  end(): PivotEvent[] {
    return this.read(undefined);
  }

  private read(chunk: Buffer | undefined): PivotEvent[] {
    this.framer.load(chunk);
    const events: PivotEvent[] = [];
    const { framer } = this;
    while (framer.next()) {
      const data = framer.dataLine();
      if (data !== -1 && this.readDataBytes(framer.bytes, data, framer.end, events)) continue;
      this.readData(parseSseEvent(framer.raw()).data, events);
    }
    return events;
  }

  /**
   * An event that is one `data:` line, as its data's bytes `bytes[start, end)`, before it is decoded:
   * true when read from them; false (as here) to have it decoded and read by readData.
   */
  protected readDataBytes(_bytes: Buffer, _start: number, _end: number, _events: PivotEvent[]): boolean {
    return false;
  }

  /** One event's data: its JSON read, unless it is not an object (a malformed event carries nothing a caller could use). */
  protected readData(data: string, events: PivotEvent[]): void {
    const event = parseJsonObject(data);
    if (event !== undefined) this.readEvent(event as Event, events);
  }

  protected abstract readEvent(event: Event, events: PivotEvent[]): void;
}
