// Reading what a chat completion used, from a whole answer or from a stream seen so far.
import type { ChatCompletionChunk, ChatUsage } from './types.js';

export interface TokenUsage {
  input_token: number;
  output_token: number;
}

export const tokensOf = (usage: ChatUsage): TokenUsage => ({
  input_token: usage.prompt_tokens,
  output_token: usage.completion_tokens,
});

/** Follows a chunk stream: the final usage when it comes, and how much was generated meanwhile. */
export class ChatStreamMeter {
  usage: ChatUsage | undefined;
  /** Chunks that carried generated content; upstreams send about one token per chunk. */
  generatedChunks = 0;
  /** The upstream sent an error object in the stream. */
  failed = false;

  observe(chunk: ChatCompletionChunk): void {
    if ((chunk as { error?: unknown }).error) this.failed = true;
    if (chunk.usage) this.usage = chunk.usage;
    const delta = chunk.choices?.[0]?.delta;
    if (delta && (delta.content || delta.tool_calls?.length)) this.generatedChunks += 1;
  }

  /**
   * The upstream's own count when it sent one; else the prompt estimate and what was generated;
   * undefined when it failed before generating anything (nothing to bill).
   */
  tokens(estimatedInput: number): TokenUsage | undefined {
    if (this.usage) return tokensOf(this.usage);
    if (this.failed && this.generatedChunks === 0) return undefined;
    return { input_token: estimatedInput, output_token: this.generatedChunks };
  }
}
