// An Anthropic message, whole or streamed, read into the pivot (chat-formats.md §1.3–1.5). Pure.
import type { PivotEvent, PivotFinish, PivotResponse, PivotUsage } from '../../pivot/types.js';
import { SseJsonDecoder } from '../sse-json-decoder.js';
import { stringPiece } from '../stream-meter.js';
import { blockDeltaAt } from './delta-skim.js';
import type { NativeUsage } from './usage.js';

/** Messages counts the uncached prompt in input_tokens; the pivot's input is the whole prompt. */
export function pivotUsageOfMessages(usage: NativeUsage): PivotUsage {
  const cacheRead = usage.cache_read_input_tokens ?? 0;
  const cacheWrite = usage.cache_creation_input_tokens ?? 0;
  const pivot: PivotUsage = { input: (usage.input_tokens ?? 0) + cacheRead + cacheWrite, output: usage.output_tokens ?? 0 };
  if (cacheRead > 0) pivot.cacheRead = cacheRead;
  if (cacheWrite > 0) pivot.cacheWrite = cacheWrite;
  const writes1h = usage.cache_creation?.ephemeral_1h_input_tokens ?? 0;
  if (writes1h > 0) pivot.cacheWrite1h = writes1h;
  const searches = usage.server_tool_use?.web_search_requests ?? 0;
  if (searches > 0) pivot.webSearch = searches;
  return pivot;
}

const FINISH: Record<string, PivotFinish> = {
  end_turn: 'stop',
  pause_turn: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  stop_sequence: 'stop_sequence',
  refusal: 'refusal',
};

const finishOf = (reason: unknown): PivotFinish => FINISH[typeof reason === 'string' ? reason : ''] ?? 'stop';

interface WireBlock {
  type?: string;
  text?: unknown;
  thinking?: unknown;
  signature?: unknown;
  id?: unknown;
  name?: unknown;
  input?: unknown;
}

export function pivotResponseOfMessage(message: {
  id?: unknown;
  content?: unknown;
  stop_reason?: unknown;
  stop_sequence?: unknown;
  usage?: NativeUsage;
}): PivotResponse {
  const answer: PivotResponse = { text: '', toolCalls: [], finish: finishOf(message.stop_reason) };
  const blocks = Array.isArray(message.content) ? (message.content as WireBlock[]) : [];
  for (const block of blocks) {
    if (block.type === 'text' && typeof block.text === 'string') answer.text += block.text;
    else if (block.type === 'thinking' && typeof block.thinking === 'string') {
      answer.reasoning ??= [];
      answer.reasoning.push({ text: block.thinking, ...(typeof block.signature === 'string' && { signature: block.signature }) });
    } else if (block.type === 'tool_use' && typeof block.name === 'string') {
      answer.toolCalls.push({ id: String(block.id ?? `call_${answer.toolCalls.length}`), name: block.name, arguments: JSON.stringify(block.input ?? {}) });
    }
  }
  if (typeof message.id === 'string') answer.id = message.id;
  if (typeof message.stop_sequence === 'string') answer.stopSequence = message.stop_sequence;
  if (message.usage) answer.usage = pivotUsageOfMessages(message.usage);
  return answer;
}

/**
 * The messages event stream as pivot events. message_start reports the prompt, message_delta the
 * cumulative totals (each replaces the last), message_stop ends it.
 */
export class MessagesStreamDecoder extends SseJsonDecoder<Record<string, unknown>> {
  private usage: NativeUsage = {};
  /** The stream's block index → the pivot's call index, for tool_use blocks. */
  private readonly calls = new Map<number, number>();

  protected readEvent(event: Record<string, unknown>, events: PivotEvent[]): void {
    switch (event.type) {
      case 'message_start': {
        const usage = (event.message as { usage?: NativeUsage } | undefined)?.usage;
        if (usage) this.report({ ...usage }, events);
        break;
      }
      case 'content_block_start': {
        const block = event.content_block as WireBlock | undefined;
        if (block?.type === 'tool_use') {
          const index = this.calls.size;
          this.calls.set(Number(event.index), index);
          events.push({ type: 'tool_call', index, id: String(block.id ?? ''), name: String(block.name ?? ''), arguments: '' });
        } else if (block?.type === 'text' && typeof block.text === 'string' && block.text !== '') events.push({ type: 'text', text: block.text });
        break;
      }
      case 'content_block_delta':
        this.readDelta(Number(event.index), event.delta as Record<string, unknown> | undefined, events);
        break;
      case 'message_delta': {
        const delta = event.delta as { stop_reason?: unknown; stop_sequence?: unknown } | undefined;
        if (delta?.stop_reason) {
          events.push({
            type: 'finish',
            finish: finishOf(delta.stop_reason),
            ...(typeof delta.stop_sequence === 'string' && { stopSequence: delta.stop_sequence }),
          });
        }
        const usage = event.usage as NativeUsage | undefined;
        if (usage) this.report({ ...this.usage, ...definedOf(usage) }, events);
        break;
      }
      case 'message_stop':
        events.push({ type: 'done' });
        break;
      case 'error': {
        const message = (event.error as { message?: unknown } | undefined)?.message;
        events.push({ type: 'error', message: typeof message === 'string' ? message : 'upstream error' });
        break;
      }
    }
  }

  /** A content block's delta read from its bytes (delta-skim.ts), as readDelta reads the parsed event. */
  protected override readDataBytes(bytes: Buffer, start: number, end: number, events: PivotEvent[]): boolean {
    const piece = blockDeltaAt(bytes, start, end);
    const text = piece && stringPiece(bytes, piece.open, piece.close);
    if (piece === undefined || text === undefined) return false;
    if (piece.kind === 'text') events.push({ type: 'text', text });
    else if (piece.kind === 'thinking') events.push({ type: 'reasoning', text });
    else if (text !== '') {
      const index = this.calls.get(piece.index);
      if (index !== undefined) events.push({ type: 'tool_call', index, arguments: text });
    }
    return true;
  }

  private readDelta(blockIndex: number, delta: Record<string, unknown> | undefined, events: PivotEvent[]): void {
    if (!delta) return;
    if (delta.type === 'text_delta' && typeof delta.text === 'string') events.push({ type: 'text', text: delta.text });
    else if (delta.type === 'thinking_delta' && typeof delta.thinking === 'string') events.push({ type: 'reasoning', text: delta.thinking });
    else if (delta.type === 'signature_delta' && typeof delta.signature === 'string') events.push({ type: 'reasoning', text: '', signature: delta.signature });
    else if (delta.type === 'input_json_delta' && typeof delta.partial_json === 'string' && delta.partial_json !== '') {
      const index = this.calls.get(blockIndex);
      if (index !== undefined) events.push({ type: 'tool_call', index, arguments: delta.partial_json });
    }
  }

  private report(usage: NativeUsage, events: PivotEvent[]): void {
    this.usage = usage;
    events.push({ type: 'usage', usage: pivotUsageOfMessages(usage) });
  }
}

/** The fields a message_delta's usage carries (null ones left as they were): counts, and objects of counts (server_tool_use, cache_creation). */
export function definedOf(usage: NativeUsage): NativeUsage {
  const out: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(usage)) if (typeof value === 'number' || (value !== null && typeof value === 'object')) out[field] = value;
  return out as NativeUsage;
}
