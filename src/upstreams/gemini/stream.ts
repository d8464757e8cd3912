// Gemini's streamGenerateContent (`?alt=sse`) read into pivot events. Each `data:` is one whole
// GenerateContentResponse holding the next piece of the answer; a function call comes whole in one.
import type { PivotEvent, PivotStreamDecoder } from '../../pivot/types.js';
import { parseSseEvent, SseFramer } from '../sse.js';
import { finishOf, pivotUsageOf, readPart } from './from-upstream.js';
import type { GenerateContentResponse } from './types.js';

/**
 * The stream has no end marker: the chunk with a finishReason is the last of the answer, so `done`
 * is said at the body's end only when one came; a body that ends without one was cut short.
 */
export class GeminiSseDecoder implements PivotStreamDecoder {
  private readonly framer = new SseFramer();
  private calls = 0;
  private finished = false;

  push(chunk: Buffer): PivotEvent[] {
    return this.read(this.framer.push(chunk));
  }

  end(): PivotEvent[] {
    const events = this.read(this.framer.end());
    if (this.finished) events.push({ type: 'done' });
    return events;
  }

  private read(frames: { raw: string }[]): PivotEvent[] {
    const events: PivotEvent[] = [];
    for (const { raw } of frames) {
      const { data } = parseSseEvent(raw);
      if (!data.startsWith('{')) continue;
      let chunk: GenerateContentResponse & { error?: { message?: unknown } };
      try {
        chunk = JSON.parse(data);
      } catch {
        continue; // a malformed chunk carries nothing a caller could use
      }
      if (chunk.error) {
        const message = chunk.error.message;
        events.push({ type: 'error', message: typeof message === 'string' ? message : 'upstream error' });
        continue;
      }
      this.readChunk(chunk, events);
    }
    return events;
  }

  private readChunk(chunk: GenerateContentResponse, events: PivotEvent[]): void {
    const candidate = chunk.candidates?.[0];
    for (const part of candidate?.content?.parts ?? []) {
      for (const reading of readPart(part)) {
        if (reading.type !== 'tool_call') events.push(reading);
        else {
          const index = this.calls++;
          events.push({ type: 'tool_call', index, id: reading.id ?? `call_${index}`, name: reading.name, arguments: reading.arguments });
        }
      }
    }
    // Said once: a later chunk repeating the reason (with the final usage) adds nothing.
    const blocked = !candidate && chunk.promptFeedback?.blockReason !== undefined;
    if (!this.finished && (candidate?.finishReason || blocked)) {
      this.finished = true;
      events.push({ type: 'finish', finish: blocked ? 'refusal' : finishOf(String(candidate?.finishReason), this.calls > 0) });
    }
    // every chunk's usageMetadata is the running total: the last one is the answer's
    if (chunk.usageMetadata) events.push({ type: 'usage', usage: pivotUsageOf(chunk.usageMetadata) });
  }
}
