// Gemini's streamGenerateContent (`?alt=sse`) read into pivot events. Each `data:` is one whole
// GenerateContentResponse holding the next piece of the answer; a function call comes whole in one.
import type { PivotEvent } from '../../pivot/types.js';
import { SseJsonDecoder } from '../sse-json-decoder.js';
import { finishOf, pivotUsageOf, readPart } from './from-upstream.js';
import type { GenerateContentResponse } from './types.js';

/**
 * The stream has no end marker: the chunk with a finishReason is the last of the answer, so `done`
 * is said at the body's end only when one came; a body that ends without one was cut short.
 */
export class GeminiSseDecoder extends SseJsonDecoder<GenerateContentResponse & { error?: { message?: unknown } }> {
  private calls = 0;
  private finished = false;

  override end(): PivotEvent[] {
    const events = super.end();
    if (this.finished) events.push({ type: 'done' });
    return events;
  }

  protected readEvent(chunk: GenerateContentResponse & { error?: { message?: unknown } }, events: PivotEvent[]): void {
    if (chunk.error) {
      const message = chunk.error.message;
      events.push({ type: 'error', message: typeof message === 'string' ? message : 'upstream error' });
      return;
    }
    this.readChunk(chunk, events);
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
