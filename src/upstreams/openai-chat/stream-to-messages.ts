// OpenAI chat chunks as Messages stream events (chat-formats.md §3.8). Pure and synchronous: the
// caller feeds parsed chunks and writes out what comes back; no timers, no ids of its own.
import type { ContentBlock, MessagesStreamEvent, MessagesUsage } from '../anthropic/types.js';
import { messagesUsageOf, stopReasonFor } from './to-messages.js';
import type { ChatCompletionChunk, ChatToolCallFragment } from './types.js';

type BlockKind = ContentBlock['type'];

export function formatSse(event: MessagesStreamEvent): string {
  // Most of a stream is text deltas: written from a template around the one string that varies,
  // the same bytes JSON.stringify would give for the whole event (the property order is the
  // event's own), at a fraction of its cost per chunk.
  if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') {
    return `event: content_block_delta\ndata: {"type":"content_block_delta","index":${event.index},"delta":{"type":"text_delta","text":${JSON.stringify(event.delta.text)}}}\n\n`;
  }
  return `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

/**
 * Blocks are strictly sequential, as Anthropic sends them: opening one closes the one before, so a
 * client never sees a delta for a block it does not hold open ("Content block not found").
 */
export class ChatToMessagesStream {
  private started = false;
  private done = false;
  private nextIndex = 0;
  private open: { index: number; kind: BlockKind } | undefined;
  /** OpenAI tool_calls index → the block that call became, and the call's id. */
  private readonly tools = new Map<number, { index: number; id: string }>();
  private lastToolIndex: number | undefined;
  private calledTools = false;
  /** Set once a choice finishes: later choice content is dropped, the message_delta waits for usage. */
  private finish: { reason: string | null } | undefined;
  private deltaSent = false;
  private upstreamUsage: MessagesUsage | undefined;
  /** Chunks that carried generated text, reasoning or arguments: about a token each (as ChatStreamMeter counts). */
  private generatedChunks = 0;

  constructor(private readonly ids: { id: string; model: string; inputTokens: number }) {}

  /** The upstream's own usage (Anthropic semantics, §3.6) once a chunk carried it; else undefined. */
  usage(): MessagesUsage | undefined {
    return this.upstreamUsage && { ...this.upstreamUsage };
  }

  push(chunk: ChatCompletionChunk): MessagesStreamEvent[] {
    if (this.done) return [];
    const events = this.start();
    const choice = chunk.choices?.[0];
    if (choice && !this.finish) {
      const delta = choice.delta ?? {};
      let generated = false;
      const reasoning = delta.reasoning_content ?? delta.reasoning;
      if (typeof reasoning === 'string' && reasoning !== '') {
        const index = this.into('thinking', events);
        events.push({ type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: reasoning } });
        generated = true;
      }
      // the first chunk's `content: ""` must not open a block
      if (typeof delta.content === 'string' && delta.content !== '') {
        const index = this.into('text', events);
        events.push({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: delta.content } });
        generated = true;
      }
      for (const fragment of Array.isArray(delta.tool_calls) ? delta.tool_calls : []) {
        if (this.pushToolFragment(fragment as ChatToolCallFragment, events)) generated = true;
      }
      if (generated) this.generatedChunks += 1;
      // content and finish in one chunk: the content above is already out, the finish follows it
      if (choice.finish_reason) {
        this.finish = { reason: choice.finish_reason };
        this.closeOpen(events);
      }
    }
    if (chunk.usage) {
      this.upstreamUsage = messagesUsageOf(chunk.usage);
      // usage comes in its own chunk after the finish (include_usage): now the message can close
      if (this.finish && !this.deltaSent) events.push(this.messageDelta());
    }
    return events;
  }

  /** The upstream ended cleanly (`[DONE]` or end of body). */
  end(): MessagesStreamEvent[] {
    if (this.done) return [];
    const events = this.start();
    this.closeOpen(events);
    if (!this.deltaSent) events.push(this.messageDelta());
    events.push({ type: 'message_stop' });
    this.done = true;
    return events;
  }

  /**
   * The upstream broke mid-stream. Nothing is closed: a block or message that looks finished would
   * pass a cut answer off as whole. The error event is the last thing sent. Once message_delta is
   * out, finish and usage both came and only `[DONE]` was lost: the answer is whole, and nothing but
   * message_stop may follow message_delta, so that is what is sent.
   */
  fail(message: string): MessagesStreamEvent[] {
    if (this.done) return [];
    this.done = true;
    if (this.deltaSent) return [{ type: 'message_stop' }];
    return [{ type: 'error', error: { type: 'api_error', message } }];
  }

  private start(): MessagesStreamEvent[] {
    if (this.started) return [];
    this.started = true;
    return [
      {
        type: 'message_start',
        message: {
          id: this.ids.id,
          type: 'message',
          role: 'assistant',
          model: this.ids.model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          // output 0: nothing generated yet (message_delta overwrites both); the cache keys say
          // caching is understood, as LiteLLM sends them
          usage: { input_tokens: this.ids.inputTokens, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
        },
      },
      { type: 'ping' },
    ];
  }

  /** Makes a text or thinking block the open one, closing any other; returns its index. */
  private into(kind: 'text' | 'thinking', events: MessagesStreamEvent[]): number {
    if (this.open?.kind === kind) return this.open.index;
    const block: ContentBlock = kind === 'text' ? { type: 'text', text: '' } : { type: 'thinking', thinking: '', signature: '' };
    return this.openBlock(kind, block, events);
  }

  private openBlock(kind: BlockKind, block: ContentBlock, events: MessagesStreamEvent[]): number {
    this.closeOpen(events);
    const index = this.nextIndex++;
    this.open = { index, kind };
    events.push({ type: 'content_block_start', index, content_block: block });
    return index;
  }

  private closeOpen(events: MessagesStreamEvent[]): void {
    if (!this.open) return;
    events.push({ type: 'content_block_stop', index: this.open.index });
    this.open = undefined;
  }

  /**
   * Each OpenAI call index is its own tool_use block; a new id on a known index is a new call too
   * (servers that number every call 0). A fragment for a call whose block is already closed cannot
   * be delivered any more and is dropped: OpenAI sends each call's fragments together.
   * Returns whether argument text went out.
   */
  private pushToolFragment(fragment: ChatToolCallFragment, events: MessagesStreamEvent[]): boolean {
    if (fragment === null || typeof fragment !== 'object') return false;
    const openaiIndex = typeof fragment.index === 'number' ? fragment.index : (this.lastToolIndex ?? 0);
    this.lastToolIndex = openaiIndex;
    let call = this.tools.get(openaiIndex);
    if (!call || (fragment.id && fragment.id !== call.id)) {
      // an upstream that sends no id still gets a stable, unique one: the message id and block index
      const id = fragment.id || `${this.ids.id}_call_${this.nextIndex}`;
      const name = fragment.function?.name ?? '';
      const index = this.openBlock('tool_use', { type: 'tool_use', id, name, input: {} }, events);
      call = { index, id };
      this.tools.set(openaiIndex, call);
      this.calledTools = true;
    }
    if (this.open?.index !== call.index) return false;
    const args = fragment.function?.arguments;
    // empty pieces (the usual first fragment) would only be noise
    if (typeof args !== 'string' || args === '') return false;
    events.push({ type: 'content_block_delta', index: call.index, delta: { type: 'input_json_delta', partial_json: args } });
    return true;
  }

  private messageDelta(): MessagesStreamEvent {
    this.deltaSent = true;
    return {
      type: 'message_delta',
      delta: { stop_reason: stopReasonFor(this.finish?.reason, this.calledTools), stop_sequence: null },
      // The upstream's real counts, which the call is billed on (DESIGN §5): message_start could
      // only carry the gateway's estimate of the prompt, and clients overwrite it with these. An
      // upstream that sent no usage leaves the estimate and a token per generated chunk.
      usage: this.upstreamUsage ? { ...this.upstreamUsage } : { input_tokens: this.ids.inputTokens, output_tokens: this.generatedChunks },
    };
  }
}
