// A pivot answer written as a chat completion, whole or as its chunk stream (chat-formats.md
// §3.5–3.8), for a chat-completions caller whose model is on another kind of upstream. Pure.
import type { PivotEvent, PivotFinish, PivotResponse, PivotStreamEncoder, PivotUsage } from '../../pivot/types.js';

export interface ChatIds {
  /** `chatcmpl-…`, the gateway's own. */
  id: string;
  /** The model id the caller named. */
  model: string;
  /** Unix seconds. */
  created: number;
}

const FINISH: Record<PivotFinish, string> = {
  stop: 'stop',
  stop_sequence: 'stop',
  length: 'length',
  tool_calls: 'tool_calls',
  refusal: 'content_filter',
};

export function chatUsageOf(usage: PivotUsage) {
  return {
    prompt_tokens: usage.input,
    completion_tokens: usage.output,
    total_tokens: usage.input + usage.output,
    // cache_write_tokens only when some were written: OpenAI's own usage has none, its look-alikes do
    prompt_tokens_details: {
      cached_tokens: usage.cacheRead ?? 0,
      ...(usage.cacheWrite && { cache_write_tokens: usage.cacheWrite }),
      ...(usage.audioInput && { audio_tokens: usage.audioInput }),
      ...(usage.imageInput && { image_tokens: usage.imageInput }),
    },
    completion_tokens_details: { reasoning_tokens: usage.reasoning ?? 0, ...(usage.audioOutput && { audio_tokens: usage.audioOutput }) },
  };
}

export function chatCompletionOf(answer: PivotResponse, ids: ChatIds) {
  const message: Record<string, unknown> = {
    role: 'assistant',
    content: answer.text === '' && answer.toolCalls.length > 0 ? null : answer.text,
    refusal: null,
  };
  const reasoning = answer.reasoning?.map((r) => r.text).join('');
  // DeepSeek's field, the one OpenAI-compatible clients read reasoning from
  if (reasoning) message.reasoning_content = reasoning;
  if (answer.toolCalls.length > 0) {
    message.tool_calls = answer.toolCalls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } }));
  }
  return {
    id: ids.id,
    object: 'chat.completion',
    created: ids.created,
    model: ids.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: FINISH[answer.finish] }],
    ...(answer.usage && { usage: chatUsageOf(answer.usage) }),
  };
}

/**
 * The chunk stream. Text chunks are written from a template around their one varying string (the
 * bytes JSON.stringify would give, at a fraction of its cost per chunk). Usage goes out, in its own
 * chunk with no choices, only when the caller asked for it (`stream_options.include_usage`).
 */
export class ChatStreamEncoder implements PivotStreamEncoder {
  private readonly head: string;
  private started = false;
  private usage: PivotUsage | undefined;
  private done = false;

  constructor(
    ids: ChatIds,
    private readonly includeUsage: boolean,
  ) {
    this.head = `data: {"id":${JSON.stringify(ids.id)},"object":"chat.completion.chunk","created":${ids.created},"model":${JSON.stringify(ids.model)},"choices":[`;
  }

  push(event: PivotEvent): string {
    if (this.done) return '';
    switch (event.type) {
      case 'text':
        return `${this.start()}${this.head}{"index":0,"delta":{"content":${JSON.stringify(event.text)}},"logprobs":null,"finish_reason":null}]}\n\n`;
      case 'reasoning':
        return event.text === '' ? '' : this.chunk({ reasoning_content: event.text });
      case 'tool_call': {
        const call: Record<string, unknown> = { index: event.index };
        if (event.id !== undefined || event.name !== undefined) {
          Object.assign(call, { id: event.id ?? `call_${event.index}`, type: 'function', function: { name: event.name ?? '', arguments: event.arguments } });
        } else call.function = { arguments: event.arguments };
        return this.chunk({ tool_calls: [call] });
      }
      case 'finish':
        return this.chunk({}, FINISH[event.finish]);
      case 'usage':
        this.usage = event.usage;
        return '';
      case 'done': {
        this.done = true;
        const usage = this.includeUsage && this.usage ? `${this.head}],"usage":${JSON.stringify(chatUsageOf(this.usage))}}\n\n` : '';
        return `${this.start()}${usage}data: [DONE]\n\n`;
      }
      case 'error':
        return '';
    }
  }

  /** OpenAI's clients raise a `data:` object carrying `error`; nothing follows it. */
  fail(message: string): string {
    this.done = true;
    return `data: ${JSON.stringify({ error: { message, type: 'server_error', param: null, code: null } })}\n\n`;
  }

  /** The first chunk names the role, as OpenAI's does. */
  private start(): string {
    if (this.started) return '';
    this.started = true;
    return `${this.head}{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}\n\n`;
  }

  private chunk(delta: Record<string, unknown>, finish: string | null = null): string {
    return `${this.start()}${this.head}${JSON.stringify({ index: 0, delta, logprobs: null, finish_reason: finish })}]}\n\n`;
  }
}
