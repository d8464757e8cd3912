// The part every SSE-speaking kind's stream decoder shares: frame the body into events and read each
// event's JSON data; the kind says what an event means in pivot events.
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
    while (this.framer.next()) this.readData(parseSseEvent(this.framer.raw()).data, events);
    return events;
  }

  /** One event's data: its JSON read, unless it is not an object (a malformed event carries nothing a caller could use). */
  protected readData(data: string, events: PivotEvent[]): void {
    if (!data.startsWith('{')) return;
    let event: Event;
    try {
      event = JSON.parse(data);
    } catch {
      return;
    }
    this.readEvent(event, events);
  }

  protected abstract readEvent(event: Event, events: PivotEvent[]): void;
}
