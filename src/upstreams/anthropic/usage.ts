// Reading what a messages-native call used. Input counts every input token, cached or not:
// the account pays the input price for each (the catalogue has no separate cache price).

import type { TokenUsage } from '../openai-chat/usage.js';
import { TokenStreamMeter } from '../stream-meter.js';

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
 * cumulative totals (overwrite, never add); message_stop ends it. Text and JSON deltas are the
 * output delivered, counted by the gateway until the upstream says.
 */
export class MessagesStreamMeter extends TokenStreamMeter {
  private usage: NativeUsage = {};
  private sawStart = false;
  private sawDelta = false;

  observe(event: {
    type?: string;
    message?: { usage?: NativeUsage };
    usage?: NativeUsage;
    delta?: { text?: unknown; partial_json?: unknown; thinking?: unknown };
  }): void {
    if (event.type === 'message_start' && event.message?.usage) {
      this.sawStart = true;
      this.usage = { ...event.message.usage };
    } else if (event.type === 'message_delta' && event.usage) {
      this.sawDelta = true;
      for (const [field, value] of Object.entries(event.usage)) if (typeof value === 'number') (this.usage as Record<string, number>)[field] = value;
    } else if (event.type === 'content_block_delta') {
      this.output.add(event.delta?.text);
      this.output.add(event.delta?.partial_json);
      this.output.add(event.delta?.thinking);
    } else if (event.type === 'message_stop') this.ended = true;
    else if (event.type === 'error') this.failed = true;
  }

  /**
   * The upstream's figures: input from message_start, output once message_delta gave it. A stream
   * cut before message_delta still bills the input the upstream reported (and the caller was shown),
   * not the gateway's own estimate of it; its output is what the gateway counted as delivered.
   */
  reported(): TokenUsage | undefined {
    if (!this.sawStart) return undefined;
    return this.sawDelta ? nativeTokens(this.usage) : { input_token: nativeTokens(this.usage).input_token, output_token: this.output.tokens() };
  }
}
