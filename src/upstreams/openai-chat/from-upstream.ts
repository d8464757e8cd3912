// An OpenAI chat completion, whole or streamed, read into the pivot (chat-formats.md §3.5–3.8). Pure.
import type { PivotEvent, PivotFinish, PivotResponse, PivotToolCall, PivotUsage } from '../../pivot/types.js';
import { SseJsonDecoder } from '../sse-json-decoder.js';
import type { PieceSink } from '../stream-meter.js';
import { TextChunkSkimmer } from './chunk-skim.js';
import type { ChatCompletion, ChatCompletionChunk, ChatToolCallFragment, ChatUsage } from './types.js';

/** Usage as OpenAI and its look-alikes report it; DeepSeek counts cache hits in fields of its own. */
export function pivotUsageOfChat(usage: ChatUsage & Record<string, unknown>): PivotUsage {
  const details = usage.prompt_tokens_details;
  const completion = usage.completion_tokens_details;
  const cacheRead = numberOr(details?.cached_tokens) ?? numberOr(usage.prompt_cache_hit_tokens);
  const pivot: PivotUsage = { input: usage.prompt_tokens ?? 0, output: usage.completion_tokens ?? 0 };
  if (cacheRead) pivot.cacheRead = cacheRead;
  const cacheWrite = numberOr(details?.cache_write_tokens);
  if (cacheWrite) pivot.cacheWrite = cacheWrite;
  const audioInput = numberOr(details?.audio_tokens);
  if (audioInput) pivot.audioInput = audioInput;
  const imageInput = numberOr(details?.image_tokens);
  if (imageInput) pivot.imageInput = imageInput;
  const reasoning = numberOr(completion?.reasoning_tokens);
  if (reasoning) pivot.reasoning = reasoning;
  const audioOutput = numberOr(completion?.audio_tokens);
  if (audioOutput) pivot.audioOutput = audioOutput;
  return pivot;
}

const numberOr = (value: unknown): number | undefined => (typeof value === 'number' && value >= 0 ? value : undefined);

const FINISH: Record<string, PivotFinish> = {
  stop: 'stop',
  length: 'length',
  tool_calls: 'tool_calls',
  function_call: 'tool_calls',
  content_filter: 'refusal',
};

/** Some OpenAI-compatible servers end a turn that called tools with `stop`: a caller's agent loop must still see the calls. */
function finishOf(reason: string | null | undefined, calledTools: boolean): PivotFinish {
  const finish = FINISH[reason ?? ''] ?? 'stop';
  return calledTools && finish === 'stop' ? 'tool_calls' : finish;
}

export function pivotResponseOfChat(completion: ChatCompletion): PivotResponse {
  const choice = completion.choices?.[0];
  const message = choice?.message as (NonNullable<typeof choice>['message'] & { reasoning?: unknown }) | undefined;
  const toolCalls: PivotToolCall[] = [];
  for (const [i, call] of (message?.tool_calls ?? []).entries()) {
    const fn = (call as { id?: unknown; function?: { name?: unknown; arguments?: unknown } }).function;
    if (typeof fn?.name !== 'string') continue;
    const id = (call as { id?: unknown }).id;
    toolCalls.push({
      id: typeof id === 'string' && id !== '' ? id : `call_${i}`,
      name: fn.name,
      arguments: typeof fn.arguments === 'string' ? fn.arguments : '',
    });
  }
  const reasoningText = message?.reasoning_content ?? message?.reasoning;
  const answer: PivotResponse = {
    text: message?.content || message?.refusal || '',
    toolCalls,
    finish: finishOf(choice?.finish_reason, toolCalls.length > 0),
  };
  if (typeof completion.id === 'string') answer.id = completion.id;
  if (typeof reasoningText === 'string' && reasoningText !== '') answer.reasoning = [{ text: reasoningText }];
  if (completion.usage) answer.usage = pivotUsageOfChat(completion.usage as ChatUsage & Record<string, unknown>);
  return answer;
}

/**
 * The chat SSE stream as pivot events: `[DONE]` is the end; each call's fragments keep the call's
 * own index, counted across the stream (servers that number every call 0 give each new id a new one).
 */
export class ChatStreamDecoder extends SseJsonDecoder<ChatCompletionChunk & { error?: { message?: unknown } }> {
  private readonly skimmer = new TextChunkSkimmer();
  /** Where the skimmer's text goes: the events of the chunk being read (one sink a stream, not one an event). */
  private events: PivotEvent[] = [];
  private readonly textSink: PieceSink = {
    add: (text) => this.text(text, this.events),
    addBytes: (bytes, start, end) => this.text(bytes.toString('utf8', start, end), this.events),
  };
  /** The upstream's tool_calls index → the pivot's call index, and the call's id. */
  private readonly calls = new Map<number, { index: number; id: string | undefined }>();
  private lastUpstreamIndex: number | undefined;
  private nextCall = 0;
  private finished = false;

  /** `[DONE]` ends the stream; most chunks carry one piece of text, read without parsing the whole chunk. */
  protected override readData(data: string, events: PivotEvent[]): void {
    if (data === '[DONE]') {
      events.push({ type: 'done' });
      return;
    }
    const text = this.skimmer.read(data);
    if (text === undefined) return super.readData(data, events);
    this.text(text, events);
  }

  /** A text chunk is read from its bytes, only its text decoded; any other is decoded and parsed. */
  protected override readDataBytes(bytes: Buffer, start: number, end: number, events: PivotEvent[]): boolean {
    this.events = events;
    return this.skimmer.readBytes(bytes, start, end, this.textSink);
  }

  private text(text: string, events: PivotEvent[]): void {
    // text after the finish is dropped, as it is from a parsed chunk
    if (text !== '' && !this.finished) events.push({ type: 'text', text });
  }

  protected readEvent(chunk: ChatCompletionChunk & { error?: { message?: unknown } }, events: PivotEvent[]): void {
    if (chunk.error) {
      events.push({ type: 'error', message: typeof chunk.error.message === 'string' ? chunk.error.message : 'upstream error' });
      return;
    }
    const choice = chunk.choices?.[0];
    if (choice && !this.finished) {
      const delta = choice.delta ?? {};
      const reasoning = delta.reasoning_content ?? delta.reasoning;
      if (typeof reasoning === 'string' && reasoning !== '') events.push({ type: 'reasoning', text: reasoning });
      // the first chunk's `content: ""` carries nothing
      if (typeof delta.content === 'string' && delta.content !== '') events.push({ type: 'text', text: delta.content });
      for (const fragment of Array.isArray(delta.tool_calls) ? delta.tool_calls : []) this.readToolFragment(fragment as ChatToolCallFragment, events);
      if (choice.finish_reason) {
        this.finished = true;
        events.push({ type: 'finish', finish: finishOf(choice.finish_reason, this.nextCall > 0) });
      }
    }
    if (chunk.usage) events.push({ type: 'usage', usage: pivotUsageOfChat(chunk.usage as ChatUsage & Record<string, unknown>) });
  }

  private readToolFragment(fragment: ChatToolCallFragment, events: PivotEvent[]): void {
    if (fragment === null || typeof fragment !== 'object') return;
    const upstreamIndex = typeof fragment.index === 'number' ? fragment.index : (this.lastUpstreamIndex ?? 0);
    this.lastUpstreamIndex = upstreamIndex;
    const args = typeof fragment.function?.arguments === 'string' ? fragment.function.arguments : '';
    let call = this.calls.get(upstreamIndex);
    if (!call || (fragment.id && call.id !== undefined && fragment.id !== call.id)) {
      call = { index: this.nextCall++, id: fragment.id ?? undefined };
      this.calls.set(upstreamIndex, call);
      const event: PivotEvent = { type: 'tool_call', index: call.index, name: fragment.function?.name ?? '', arguments: args };
      if (fragment.id) event.id = fragment.id;
      events.push(event);
      return;
    }
    if (args !== '') events.push({ type: 'tool_call', index: call.index, arguments: args });
  }
}
