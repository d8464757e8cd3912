// Reading what a messages-native call used: the uncached input, the cache reads and writes (with
// their 5-minute and 1-hour split) and the web searches, each billed at its own price.

import { unitsOfPivot, withCountedOutput } from '../../billing/usage-units.js';
import type { TokenUsage } from '../openai-chat/usage.js';
import { TokenStreamMeter } from '../stream-meter.js';
import { skimBlockDelta } from './delta-skim.js';
import { definedOf, pivotUsageOfMessages } from './from-upstream.js';

export interface NativeUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  cache_creation?: { ephemeral_5m_input_tokens?: number | null; ephemeral_1h_input_tokens?: number | null } | null;
  server_tool_use?: { web_search_requests?: number | null } | null;
}

export const nativeTokens = (usage: NativeUsage): TokenUsage => unitsOfPivot(pivotUsageOfMessages(usage));

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
      Object.assign(this.usage, definedOf(event.usage));
    } else if (event.type === 'content_block_delta') {
      this.output.add(event.delta?.text);
      this.output.add(event.delta?.partial_json);
      this.output.add(event.delta?.thinking);
    } else if (event.type === 'message_stop') this.ended = true;
    else if (event.type === 'error') this.failed = true;
  }

  /** An event's data as bytes (`bytes[from, to)`): true when it was a block's piece of output, now counted; false to parse and observe it. */
  skim(bytes: Buffer, from: number, to: number): boolean {
    return skimBlockDelta(bytes, from, to, this.output);
  }

  /**
   * The upstream's figures: input from message_start, output once message_delta gave it. A stream
   * cut before message_delta still bills the input the upstream reported (and the caller was shown),
   * not the gateway's own estimate of it; its output is what the gateway counted as delivered.
   */
  reported(): TokenUsage | undefined {
    if (!this.sawStart) return undefined;
    return this.sawDelta ? nativeTokens(this.usage) : withCountedOutput(nativeTokens(this.usage), this.output.tokens());
  }
}
