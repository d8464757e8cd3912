// The SSE text a MessagesStreamEncoder wrote, read back as the events a Messages client parses.
import assert from 'node:assert/strict';
import type { MessagesStreamEvent } from '../../../src/upstreams/anthropic/types.js';

/** Each frame's event name must be its data's type, as formatSse writes it. */
export function eventsOfSse(sse: string): MessagesStreamEvent[] {
  return sse
    .split('\n\n')
    .filter((frame) => frame !== '')
    .map((frame) => {
      const [name = '', data = ''] = frame.split('\n');
      const event = JSON.parse(data.slice('data: '.length)) as MessagesStreamEvent;
      assert.equal(name, `event: ${event.type}`);
      return event;
    });
}
