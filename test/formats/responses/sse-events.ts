// Test helpers: a responses stream's text read back into its events, and served to the official
// `openai` client as if from the API.
import OpenAI from 'openai';

export interface SseEvent {
  event: string;
  data: Record<string, unknown> & { type: string; sequence_number: number };
}

/** Each `event:`/`data:` pair of an SSE text; a frame whose two names differ fails the test that reads it. */
export function sseEvents(text: string): SseEvent[] {
  return text
    .split('\n\n')
    .filter((frame) => frame !== '')
    .map((frame) => {
      const match = /^event: ([^\n]+)\ndata: ([^\n]+)$/.exec(frame);
      if (!match) throw new Error(`not an SSE frame: ${frame}`);
      return { event: match[1] as string, data: JSON.parse(match[2] as string) };
    });
}

/** An `openai` client whose every request is answered with `sse` as an event stream. */
export function clientServing(sse: string): OpenAI {
  return new OpenAI({
    apiKey: 'test',
    baseURL: 'http://gateway.test/v1',
    maxRetries: 0,
    fetch: async () => new Response(sse, { headers: { 'content-type': 'text/event-stream' } }),
  });
}
