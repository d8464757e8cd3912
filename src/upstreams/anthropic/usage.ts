// Reading what a messages-native call used. Input counts every input token, cached or not:
// the account pays the input price for each (the catalogue has no separate cache price).
import type { TokenUsage } from '../openai-chat/usage.js';

export interface NativeUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
}

export const nativeTokens = (usage: NativeUsage): TokenUsage => ({
  input_token: (usage.input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0) + (usage.cache_read_input_tokens ?? 0),
  output_token: usage.output_tokens ?? 0,
});

/**
 * Follows a native event stream. message_start carries the input count; message_delta carries
 * cumulative totals (overwrite, never add). Until a delta comes, each text or JSON delta counts
 * as one generated token.
 */
export class MessagesStreamMeter {
  private usage: NativeUsage = {};
  private sawStart = false;
  private sawDelta = false;
  private failed = false;
  generatedChunks = 0;

  observe(event: { type?: string; message?: { usage?: NativeUsage }; usage?: NativeUsage }): void {
    if (event.type === 'message_start' && event.message?.usage) {
      this.sawStart = true;
      this.usage = { ...event.message.usage };
    } else if (event.type === 'message_delta' && event.usage) {
      this.sawDelta = true;
      for (const [field, value] of Object.entries(event.usage)) if (typeof value === 'number') (this.usage as Record<string, number>)[field] = value;
    } else if (event.type === 'content_block_delta') this.generatedChunks += 1;
    else if (event.type === 'error') this.failed = true;
  }

  /** Undefined when the upstream failed before generating anything (nothing to bill). */
  tokens(estimatedInput: number): TokenUsage | undefined {
    if (this.failed && this.generatedChunks === 0 && !this.sawDelta) return undefined;
    const seen = nativeTokens(this.usage);
    return {
      input_token: this.sawStart ? seen.input_token : estimatedInput,
      output_token: this.sawDelta ? seen.output_token : this.generatedChunks,
    };
  }
}
