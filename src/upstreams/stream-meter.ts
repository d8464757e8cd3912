// What the token-priced streams (chat, responses, messages) share: the output delivered so far,
// counted with the model's tokenizer, an end marker seen and an upstream error seen. Each protocol
// says in its own meter which events are which, and what usage the upstream reported.
import { OutputCounter } from '../billing/output-counter.js';
import type { TokenizerName } from '../billing/tokens.js';
import type { StreamMeter } from '../pipeline/types.js';
import type { TokenUsage } from './openai-chat/usage.js';

export abstract class TokenStreamMeter implements StreamMeter {
  /** The upstream reported an error in the stream. */
  failed = false;
  /** The protocol's end marker arrived. */
  protected ended = false;
  readonly output: OutputCounter;

  constructor(tokenizer: TokenizerName) {
    this.output = new OutputCounter(tokenizer);
  }

  get completed(): boolean {
    return this.ended && !this.failed;
  }

  abstract reported(): TokenUsage | undefined;

  delivered(): { output_token: number } {
    return { output_token: this.output.tokens() };
  }
}
