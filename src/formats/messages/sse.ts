// One Messages stream event as an SSE frame, its type as the event name (chat-formats.md §1.5).
import type { MessagesStreamEvent } from '../../upstreams/anthropic/types.js';

export function formatSse(event: MessagesStreamEvent): string {
  // Most of a stream is text deltas: written from a template around the one string that varies,
  // the same bytes JSON.stringify would give for the whole event (the property order is the
  // event's own), at a fraction of its cost per chunk.
  if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') {
    return `event: content_block_delta\ndata: {"type":"content_block_delta","index":${event.index},"delta":{"type":"text_delta","text":${JSON.stringify(event.delta.text)}}}\n\n`;
  }
  return `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}
