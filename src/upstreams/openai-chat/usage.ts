// Reading what a chat completion used, from a whole answer or from a stream seen so far.
import type { Units } from '../../billing/prices.js';
import { unitsOfPivot } from '../../billing/usage-units.js';
import { TokenStreamMeter } from '../stream-meter.js';
import { carriesNothingMetered, TextChunkSkimmer } from './chunk-skim.js';
import { pivotUsageOfChat } from './from-upstream.js';
import type { ChatCompletion, ChatCompletionChunk, ChatUsage } from './types.js';

/** Usage in the units it is billed in (billing/usage-units.ts). */
export type TokenUsage = Units;

/** OpenAI's usage and its look-alikes' (DeepSeek's cache hits), in billed units. */
export const tokensOf = (usage: ChatUsage): TokenUsage => unitsOfPivot(pivotUsageOfChat(usage as ChatUsage & Record<string, unknown>));

/** The text a completion's choices carry: what the gateway counts when the upstream gives no usage. */
export function completionText(completion: ChatCompletion): string {
  let text = '';
  for (const choice of completion.choices ?? []) {
    const message = choice.message as { content?: unknown; tool_calls?: unknown } | undefined;
    if (typeof message?.content === 'string') text += message.content;
    if (message?.tool_calls) text += JSON.stringify(message.tool_calls);
  }
  return text;
}

/** Follows a chunk stream: the final usage when it comes, the output delivered meanwhile, and `[DONE]`. */
export class ChatStreamMeter extends TokenStreamMeter {
  usage: ChatUsage | undefined;
  private readonly skimmer = new TextChunkSkimmer();

  /** `[DONE]`, the stream's end marker. */
  markDone(): void {
    this.ended = true;
  }

  observe(chunk: ChatCompletionChunk): void {
    if ((chunk as { error?: unknown }).error) this.failed = true;
    if (chunk.usage) this.usage = chunk.usage;
    const delta = chunk.choices?.[0]?.delta;
    if (!delta) return;
    this.output.add(delta.content);
    this.output.add(delta.reasoning_content ?? delta.reasoning);
    if (delta.tool_calls?.length) this.output.add(JSON.stringify(delta.tool_calls));
  }

  /**
   * A chunk's JSON as bytes (`bytes[from, to)`): true when it was a text-only chunk and its text is
   * counted, or a chunk with nothing to count; false to parse and observe it.
   */
  skim(bytes: Buffer, from: number, to: number): boolean {
    return this.skimmer.readBytes(bytes, from, to, this.output, carriesNothingMetered);
  }

  reported(): TokenUsage | undefined {
    return this.usage && tokensOf(this.usage);
  }
}
