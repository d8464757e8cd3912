// A pivot answer written as a Messages answer, whole or as its event stream (chat-formats.md
// §1.3–1.5), for a messages caller whose model is on another kind of upstream. Pure.
import type { PivotEvent, PivotFinish, PivotResponse, PivotStreamEncoder, PivotUsage } from '../../pivot/types.js';
import type { ContentBlock, Message, MessagesStreamEvent, MessagesUsage, StopReason } from '../../upstreams/anthropic/types.js';
import { formatSse } from './sse.js';
import { toolInputOf } from './tool-input.js';

export interface MessageIds {
  /** `msg_…`, the gateway's own. */
  id: string;
  /** The model id the caller named. */
  model: string;
}

const STOP: Record<PivotFinish, StopReason> = {
  stop: 'end_turn',
  stop_sequence: 'stop_sequence',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  refusal: 'refusal',
};

/** Messages counts the uncached prompt in input_tokens, the cache reads and writes beside it. */
export function messagesUsageOfPivot(usage: PivotUsage): MessagesUsage {
  const out: MessagesUsage = { input_tokens: Math.max(usage.input - (usage.cacheRead ?? 0) - (usage.cacheWrite ?? 0), 0), output_tokens: usage.output };
  if (usage.cacheWrite) out.cache_creation_input_tokens = usage.cacheWrite;
  if (usage.cacheRead) out.cache_read_input_tokens = usage.cacheRead;
  if (usage.cacheWrite1h) {
    const oneHour = Math.min(usage.cacheWrite1h, usage.cacheWrite ?? 0);
    out.cache_creation = { ephemeral_5m_input_tokens: (usage.cacheWrite ?? 0) - oneHour, ephemeral_1h_input_tokens: oneHour };
  }
  if (usage.webSearch) out.server_tool_use = { web_search_requests: usage.webSearch };
  return out;
}

/** A turn that called tools is `tool_use` whatever the upstream said: an agent loop must run them. */
const stopOf = (finish: PivotFinish, calledTools: boolean): StopReason => (calledTools && finish === 'stop' ? 'tool_use' : STOP[finish]);

export function messageOf(answer: PivotResponse, ids: MessageIds): Message {
  const content: ContentBlock[] = [];
  // reasoning without a provider's signature gets "", the gateway's mark (dropped when sent back)
  for (const reasoning of answer.reasoning ?? []) content.push({ type: 'thinking', thinking: reasoning.text, signature: reasoning.signature ?? '' });
  if (answer.text !== '') content.push({ type: 'text', text: answer.text });
  for (const call of answer.toolCalls) content.push({ type: 'tool_use', id: call.id, name: call.name, input: toolInputOf(call.arguments) });
  return {
    id: ids.id,
    type: 'message',
    role: 'assistant',
    model: ids.model,
    content,
    stop_reason: stopOf(answer.finish, answer.toolCalls.length > 0),
    stop_sequence: answer.finish === 'stop_sequence' ? (answer.stopSequence ?? null) : null,
    usage: answer.usage ? messagesUsageOfPivot(answer.usage) : { input_tokens: 0, output_tokens: 0 },
  };
}

type BlockKind = ContentBlock['type'];

/**
 * Blocks strictly one after another, as Anthropic sends them: opening one closes the one before, so
 * a client never sees a delta for a block it does not hold open. message_delta waits for both the
 * finish and the usage (or the end), so it carries the upstream's own counts.
 */
export class MessagesStreamEncoder implements PivotStreamEncoder {
  private started = false;
  private done = false;
  private nextIndex = 0;
  private open: { index: number; kind: BlockKind; call?: number } | undefined;
  private calledTools = false;
  private finish: { finish: PivotFinish; stopSequence?: string } | undefined;
  private usage: PivotUsage | undefined;
  private deltaSent = false;
  /** Deltas of generated text, reasoning or arguments: about a token each. */
  private generated = 0;

  /** `inputTokens`: the gateway's count of the prompt, all message_start can say before the upstream has. */
  constructor(private readonly ids: MessageIds & { inputTokens: number }) {}

  push(event: PivotEvent): string {
    if (this.done) return '';
    const events = this.start();
    switch (event.type) {
      case 'text':
        if (event.text !== '') {
          events.push({ type: 'content_block_delta', index: this.into('text', events), delta: { type: 'text_delta', text: event.text } });
          this.generated += 1;
        }
        break;
      case 'reasoning': {
        const index = this.into('thinking', events);
        if (event.text !== '') {
          events.push({ type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: event.text } });
          this.generated += 1;
        }
        if (event.signature) events.push({ type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: event.signature } });
        break;
      }
      case 'tool_call':
        this.pushToolCall(event, events);
        break;
      case 'finish':
        this.finish = { finish: event.finish, ...(event.stopSequence !== undefined && { stopSequence: event.stopSequence }) };
        this.closeOpen(events);
        if (this.usage) events.push(this.messageDelta());
        break;
      case 'usage':
        this.usage = event.usage;
        if (this.finish && !this.deltaSent) events.push(this.messageDelta());
        break;
      case 'done':
        this.closeOpen(events);
        if (!this.deltaSent) events.push(this.messageDelta());
        events.push({ type: 'message_stop' });
        this.done = true;
        break;
    }
    return encode(events);
  }

  /**
   * Nothing is closed: a block that looks finished would pass a cut answer off as whole. Once
   * message_delta is out, only the end was lost, and nothing but message_stop may follow it.
   */
  fail(message: string): string {
    if (this.done) return '';
    this.done = true;
    if (this.deltaSent) return encode([{ type: 'message_stop' }]);
    return encode([{ type: 'error', error: { type: 'api_error', message } }]);
  }

  private start(): MessagesStreamEvent[] {
    if (this.started) return [];
    this.started = true;
    const usage = { input_tokens: this.ids.inputTokens, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
    return [
      {
        type: 'message_start',
        message: { id: this.ids.id, type: 'message', role: 'assistant', model: this.ids.model, content: [], stop_reason: null, stop_sequence: null, usage },
      },
      { type: 'ping' },
    ];
  }

  private into(kind: 'text' | 'thinking', events: MessagesStreamEvent[]): number {
    if (this.open?.kind === kind) return this.open.index;
    return this.openBlock(kind === 'text' ? { type: 'text', text: '' } : { type: 'thinking', thinking: '', signature: '' }, events);
  }

  private openBlock(block: ContentBlock, events: MessagesStreamEvent[], call?: number): number {
    this.closeOpen(events);
    const index = this.nextIndex++;
    this.open = { index, kind: block.type, ...(call !== undefined && { call }) };
    events.push({ type: 'content_block_start', index, content_block: block });
    return index;
  }

  private closeOpen(events: MessagesStreamEvent[]): void {
    if (!this.open) return;
    events.push({ type: 'content_block_stop', index: this.open.index });
    this.open = undefined;
  }

  /** A call's first fragment opens its block; later fragments of a call whose block was closed are lost to the format, so dropped. */
  private pushToolCall(event: Extract<PivotEvent, { type: 'tool_call' }>, events: MessagesStreamEvent[]): void {
    if (this.open?.call !== event.index) {
      if (event.id === undefined && event.name === undefined) return;
      const id = event.id || `${this.ids.id}_call_${event.index}`;
      this.openBlock({ type: 'tool_use', id, name: event.name ?? '', input: {} }, events, event.index);
      this.calledTools = true;
    }
    if (event.arguments !== '' && this.open) {
      events.push({ type: 'content_block_delta', index: this.open.index, delta: { type: 'input_json_delta', partial_json: event.arguments } });
      this.generated += 1;
    }
  }

  private messageDelta(): MessagesStreamEvent {
    this.deltaSent = true;
    const finish = this.finish?.finish ?? 'stop';
    return {
      type: 'message_delta',
      delta: { stop_reason: stopOf(finish, this.calledTools), stop_sequence: finish === 'stop_sequence' ? (this.finish?.stopSequence ?? null) : null },
      // An upstream that sent no usage leaves the gateway's estimate of the prompt and a token per
      // generated delta: zero would tell the client nothing was generated.
      usage: this.usage ? messagesUsageOfPivot(this.usage) : { input_tokens: this.ids.inputTokens, output_tokens: this.generated },
    };
  }
}

function encode(events: MessagesStreamEvent[]): string {
  let out = '';
  for (const event of events) out += formatSse(event);
  return out;
}
