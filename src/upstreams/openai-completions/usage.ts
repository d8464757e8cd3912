// Reading what a legacy completion used: the upstream's usage (the same shape as chat's), or the
// text of its choices, counted by the gateway when the upstream reports none.
import { type TokenUsage, tokensOf } from '../openai-chat/usage.js';
import { TokenStreamMeter } from '../stream-meter.js';
import type { Completion } from './types.js';

/** The text every choice carries: what the gateway counts when the upstream gives no usage. */
export function completionChoicesText(completion: Completion): string {
  let text = '';
  for (const choice of completion.choices ?? []) if (typeof choice?.text === 'string') text += choice.text;
  return text;
}

/** Follows a completion stream: its final usage when it comes, the text delivered meanwhile, and `[DONE]`. */
export class CompletionStreamMeter extends TokenStreamMeter {
  private usage: TokenUsage | undefined;

  /** `[DONE]`, the stream's end marker. */
  markDone(): void {
    this.ended = true;
  }

  observe(chunk: Completion): void {
    if ((chunk as { error?: unknown }).error) this.failed = true;
    if (chunk.usage) this.usage = tokensOf(chunk.usage);
    for (const choice of chunk.choices ?? []) this.output.add(choice?.text);
  }

  reported(): TokenUsage | undefined {
    return this.usage;
  }
}
