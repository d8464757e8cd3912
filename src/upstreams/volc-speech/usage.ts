// Speech is billed per character of req_params.text: the upstream's own count when it sends one.
import type { StreamMeter } from '../../pipeline/types.js';

/** Characters as a person counts them: Unicode code points, punctuation included. */
export const characterCount = (text: string): number => [...text].length;

export const SYNTHESIS_DONE = 20_000_000;

export interface SpeechLine {
  code?: number;
  message?: string;
  data?: string | null;
  usage?: { text_words?: number };
}

export class SpeechUpstreamError extends Error {
  override name = 'SpeechUpstreamError';
}

/**
 * Follows the line stream: remembers the last usage.text_words (authoritative, the last one
 * applies), sees the end code, and turns an error code on the first line into a failed call
 * (nothing sent yet). An error code later is the stream's failure: the caller has seen the line.
 */
export class SpeechStreamMeter implements StreamMeter {
  textWords: number | undefined;
  lines = 0;
  failed = false;
  private ended = false;

  /** `estimatedCharacters`: the text's own length, billed when the upstream reports no usage. */
  constructor(private readonly estimatedCharacters: number) {}

  get completed(): boolean {
    return this.ended && !this.failed;
  }

  observe(line: SpeechLine): void {
    this.lines += 1;
    if (typeof line.usage?.text_words === 'number') this.textWords = line.usage.text_words;
    if (line.code === SYNTHESIS_DONE) this.ended = true;
    else if (typeof line.code === 'number' && line.code !== 0) {
      if (this.lines === 1) throw new SpeechUpstreamError(`speech upstream refused: ${line.code} ${line.message ?? ''}`.trim());
      this.failed = true;
    }
  }

  /** The upstream's count, or the text's length (spec 4.1: the estimate when the upstream returns none). */
  reported(): { character: number } | undefined {
    return this.ended ? { character: this.textWords ?? this.estimatedCharacters } : undefined;
  }

  /** Speech reports usage only at the end: a stream cut short has nothing of its own to count. */
  delivered(): Record<string, never> {
    return {};
  }
}
