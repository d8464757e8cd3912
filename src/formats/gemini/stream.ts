// A pivot stream written as Gemini's streamGenerateContent answer: one GenerateContentResponse per
// step, framed as SSE (`alt=sse`) or as one JSON array sent element by element (without it).
// Pure and synchronous; the response id is the caller's.
import type { PivotEvent, PivotFinish, PivotStreamEncoder, PivotToolCall, PivotUsage } from '../../pivot/types.js';
import type { GenerateContentResponse } from '../../upstreams/gemini/types.js';
import { FINISH, functionCallPartOf, type GeminiIds, thoughtPartOf, usageMetadataOf } from './from-pivot.js';

/**
 * Pivot events as chunks, each a whole GenerateContentResponse in JSON. Gemini sends a function
 * call whole, never in pieces: a call is held until the next event shows its arguments complete.
 * The last chunk carries the finish and the usage, both in by the pivot's `done`.
 */
class GeminiChunks {
  private readonly tail: string;
  private readonly pending = new Map<number, PivotToolCall>();
  private finish: PivotFinish | undefined;
  private usage: PivotUsage | undefined;

  constructor(private readonly ids: GeminiIds) {
    this.tail = `,"modelVersion":${JSON.stringify(ids.model)},"responseId":${JSON.stringify(ids.responseId)}}`;
  }

  push(event: PivotEvent): string[] {
    if (event.type === 'tool_call') return this.pushToolCall(event);
    const chunks = this.flushCalls();
    switch (event.type) {
      case 'text':
        // Most of a stream is text: written from a template, the bytes JSON.stringify would give
        if (event.text !== '')
          chunks.push(`{"candidates":[{"content":{"role":"model","parts":[{"text":${JSON.stringify(event.text)}}]},"index":0}]${this.tail}`);
        break;
      case 'reasoning':
        if (event.text !== '' || event.signature) chunks.push(this.chunk({ content: { role: 'model', parts: [thoughtPartOf(event)] }, index: 0 }));
        break;
      case 'finish':
        this.finish = event.finish;
        break;
      case 'usage':
        this.usage = event.usage;
        break;
      case 'done':
        chunks.push(
          this.chunk(
            { content: { role: 'model', parts: [{ text: '' }] }, finishReason: FINISH[this.finish ?? 'stop'], index: 0 },
            this.usage && { usageMetadata: usageMetadataOf(this.usage) },
          ),
        );
        break;
      case 'error':
        // the caller ends a broken stream with `fail`
        break;
    }
    return chunks;
  }

  /** A call's first fragment (with its id or name) opens it; a fragment of a call already sent is lost to the format, so dropped. */
  private pushToolCall(event: Extract<PivotEvent, { type: 'tool_call' }>): string[] {
    const held = this.pending.get(event.index);
    if (held && event.id === undefined && event.name === undefined) {
      held.arguments += event.arguments;
      return [];
    }
    if (event.id === undefined && event.name === undefined) return [];
    const chunks = this.flushCalls();
    this.pending.set(event.index, { id: event.id || `call_${event.index}`, name: event.name ?? '', arguments: event.arguments });
    return chunks;
  }

  private flushCalls(): string[] {
    const chunks = [...this.pending.values()].map((call) => this.chunk({ content: { role: 'model', parts: [functionCallPartOf(call)] }, index: 0 }));
    this.pending.clear();
    return chunks;
  }

  private chunk(candidate: NonNullable<GenerateContentResponse['candidates']>[number], extra?: Partial<GenerateContentResponse>): string {
    const response: GenerateContentResponse = { candidates: [candidate], ...extra, modelVersion: this.ids.model, responseId: this.ids.responseId };
    return JSON.stringify(response);
  }
}

/** Gemini's error body, a stream's last element when the upstream broke after the caller had bytes. */
const errorOf = (message: string) => JSON.stringify({ error: { code: 500, message, status: 'INTERNAL' } });

/** `alt=sse`: each chunk one `data:` line, as Gemini frames them (CRLF). */
export class GeminiSseEncoder implements PivotStreamEncoder {
  private readonly chunks: GeminiChunks;
  private done = false;

  constructor(ids: GeminiIds) {
    this.chunks = new GeminiChunks(ids);
  }

  push(event: PivotEvent): string {
    if (this.done) return '';
    if (event.type === 'done') this.done = true;
    let out = '';
    for (const chunk of this.chunks.push(event)) out += `data: ${chunk}\r\n\r\n`;
    return out;
  }

  fail(message: string): string {
    if (this.done) return '';
    this.done = true;
    return `data: ${errorOf(message)}\r\n\r\n`;
  }
}

/** Without `alt=sse`: one JSON array, written element by element, closed at the end. */
export class GeminiJsonArrayEncoder implements PivotStreamEncoder {
  private readonly chunks: GeminiChunks;
  private opened = false;
  private done = false;

  constructor(ids: GeminiIds) {
    this.chunks = new GeminiChunks(ids);
  }

  push(event: PivotEvent): string {
    if (this.done) return '';
    let out = '';
    for (const chunk of this.chunks.push(event)) out += this.element(chunk);
    if (event.type === 'done') {
      this.done = true;
      out += ']';
    }
    return out;
  }

  /** The error is the array's last element, and the array is closed: a client's JSON parser sees it whole. */
  fail(message: string): string {
    if (this.done) return '';
    this.done = true;
    return `${this.element(errorOf(message))}]`;
  }

  private element(json: string): string {
    if (this.opened) return `,\r\n${json}`;
    this.opened = true;
    return `[${json}`;
  }
}
